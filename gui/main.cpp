#include "app/app.h"

int main(int argc, char** argv) { return reservoir::gui::runApp(argc, argv); }
