#include <iostream>

#include "cli.h"

int main(int argc, char** argv) { return reservoir::cli::runCli(argc, argv, std::cout, std::cerr); }
