#pragma once
// As `pacer run` without --url prepares a run (src/cli/run_command.cpp): the (empty) output
// folder, and the built-in probe mock on a thread of its own, whose address the run's endpoint
// takes.

#include <pacer/cli/client_options.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/server/probe_mock.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <memory>

namespace pacer::testing {

inline void with_built_in_mock(run::run_job& j) {
    std::filesystem::create_directories(j.out);
    j.mock = std::make_unique<cli::local_mock>([](boost::asio::io_context& io) {
        return std::make_unique<server::probe_mock>(io, server::mock_options{});
    });
    j.endpoint = transport::parse_ws_url(j.mock->url());
    run::apply_client_settings(j.options.client, j.endpoint);
}

} // namespace pacer::testing
