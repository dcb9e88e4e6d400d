#include <pacer/cli/commands.hpp>

int main(int argc, char** argv) {
    return pacer::cli::main(argc, argv);
}
