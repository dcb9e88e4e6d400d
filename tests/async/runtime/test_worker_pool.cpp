// runtime::worker_pool with real child processes: exit statuses in spawn order, each worker's
// output in its log, and SIGINT/SIGTERM forwarded to the workers while the pool has them.
//
// Nothing here sleeps: a child either ends by itself (`exit 3`) or is ended by the signal the
// test sends; posix_spawn returns once the child has exec'd, so a signal sent after spawn()
// reaches the new program.

#include <pacer/runtime/worker_pool.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using pacer::runtime::describe_status;
using pacer::runtime::exited_with;
using pacer::runtime::worker_pool;

class WorkerPool : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("pacer-worker-pool-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path log(int k) const { return dir_ / ("worker-" + std::to_string(k) + ".log"); }
    static std::string slurp(const fs::path& p) {
        std::ifstream in(p);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }
    fs::path dir_;
};

TEST_F(WorkerPool, CollectsExitStatusesInSpawnOrderAndLogsOutput) {
    worker_pool pool("/bin/sh");
    pool.spawn({"sh", "-c", "echo out; echo err >&2; exit 3"}, log(0));
    pool.spawn({"sh", "-c", "exit 0"}, log(1));
    ASSERT_EQ(pool.pids().size(), 2u);
    const auto statuses = pool.wait_all();
    ASSERT_EQ(statuses.size(), 2u);
    EXPECT_TRUE(exited_with(statuses[0], 3));
    EXPECT_EQ(describe_status(statuses[0]), "exit 3");
    EXPECT_EQ(describe_status(statuses[1]), "exit 0");
    EXPECT_EQ(slurp(log(0)), "out\nerr\n") << "stdout and stderr into the worker's log";
}

TEST_F(WorkerPool, ALogThatExistsIsNeverOverwritten) {
    std::ofstream(log(0)) << "kept";
    worker_pool pool("/bin/sh");
    EXPECT_THROW(pool.spawn({"sh", "-c", "echo new"}, log(0)), std::runtime_error);
    EXPECT_TRUE(pool.pids().empty());
    EXPECT_EQ(slurp(log(0)), "kept");
}

TEST_F(WorkerPool, ForwardsSigintToEveryWorker) {
    worker_pool pool("/bin/sleep");
    pool.spawn({"sleep", "600"}, log(0));
    pool.spawn({"sleep", "600"}, log(1));
    // To this process, as Ctrl-C would: the pool's handler sends it on to both workers.
    ASSERT_EQ(::raise(SIGINT), 0);
    const auto statuses = pool.wait_all();
    for (int st : statuses) {
        ASSERT_TRUE(WIFSIGNALED(st)) << describe_status(st);
        EXPECT_EQ(WTERMSIG(st), SIGINT);
    }
    EXPECT_EQ(describe_status(statuses[0]).rfind("killed by signal 2", 0), 0u)
        << describe_status(statuses[0]);
}

TEST_F(WorkerPool, ForwardsSigtermAndRestoresTheHandlersAfterwards) {
    struct sigaction mine {
    }, before{}, after{};
    mine.sa_handler = SIG_IGN;
    ::sigaction(SIGTERM, &mine, &before);
    {
        worker_pool pool("/bin/sleep");
        pool.spawn({"sleep", "600"}, log(0));
        ASSERT_EQ(::raise(SIGTERM), 0);
        const auto statuses = pool.wait_all();
        ASSERT_TRUE(WIFSIGNALED(statuses[0])) << describe_status(statuses[0]);
        EXPECT_EQ(WTERMSIG(statuses[0]), SIGTERM);
    }
    ::sigaction(SIGTERM, &before, &after);
    EXPECT_EQ(after.sa_handler, SIG_IGN) << "the handler in place before the pool is back";
}

TEST_F(WorkerPool, DestroyingThePoolEndsWorkersNotWaitedFor) {
    pid_t pid = -1;
    {
        worker_pool pool("/bin/sleep");
        pid = pool.spawn({"sleep", "600"}, log(0));
    }
    // Reaped by the pool: no such child is left.
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
}

TEST_F(WorkerPool, AProgramThatCannotStartIsAnError) {
    worker_pool pool((dir_ / "no-such-program").string());
    EXPECT_THROW(pool.spawn({"x"}, log(0)), std::runtime_error);
}

TEST_F(WorkerPool, OnePoolAtATime) {
    worker_pool pool("/bin/sh");
    EXPECT_THROW(worker_pool("/bin/sh"), std::logic_error);
}

} // namespace
