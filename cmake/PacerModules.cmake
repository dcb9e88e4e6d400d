# The module table, written down once: each module and the modules it may know (include and
# link). Data flows one way; a module reads only the public headers of the modules it lists.
# CMakeLists.txt builds one library per module from this table and
# check_module_includes.cmake fails the build when a file includes a module its module does
# not list. docs/architecture.md draws the same graph.
set(PACER_MODULES core schedule trace runtime protocol transport session console capacity_search
    metrics server telemetry report record sweep run http cli)
set(PACER_MODULE_DEPS_core "")
set(PACER_MODULE_DEPS_schedule core runtime)
set(PACER_MODULE_DEPS_trace core runtime)
set(PACER_MODULE_DEPS_runtime core)
set(PACER_MODULE_DEPS_protocol core schedule runtime)
set(PACER_MODULE_DEPS_transport core)
set(PACER_MODULE_DEPS_session core schedule trace runtime protocol transport)
set(PACER_MODULE_DEPS_console core session)
set(PACER_MODULE_DEPS_capacity_search core)
set(PACER_MODULE_DEPS_metrics core schedule trace runtime protocol)
set(PACER_MODULE_DEPS_server core runtime protocol transport)
set(PACER_MODULE_DEPS_telemetry core runtime transport)
set(PACER_MODULE_DEPS_report core schedule trace runtime metrics)
set(PACER_MODULE_DEPS_record core runtime protocol transport trace session metrics)
set(PACER_MODULE_DEPS_sweep core trace runtime protocol transport session metrics telemetry
    capacity_search)
set(PACER_MODULE_DEPS_run core schedule trace runtime protocol transport session metrics
    telemetry console)
set(PACER_MODULE_DEPS_http core schedule runtime transport session metrics telemetry console
    capacity_search)
set(PACER_MODULE_DEPS_cli core schedule trace runtime protocol transport session console
    capacity_search metrics server telemetry report record sweep run http)
