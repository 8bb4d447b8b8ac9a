// gutf8: the command-line tool. Everything lives in cli::run so that it stays testable
// and main stays a one-liner.
#include "cli/app.hpp"

int main(int argc, char** argv) { return gutf8::cli::run(argc, argv); }
