// libsystemc's main() calls sc_main; Tandem's executables have their own main() and run the
// simulator in-process, so this definition only satisfies the link.
extern "C" int sc_main(int, char**) { return 0; }
