// Linked into every executable of a TANDEM_SANITIZE build (CMakeLists.txt): the sanitizers'
// default options, so that `tandem`, the unit tests and the fuzz targets run alike under
// ctest, lit or by hand. The suppressions and why each is needed: scripts/sanitize/.
// A sanitizer report exits 86, which Tandem never uses (1 is a user error, which tests expect),
// and goes to /tmp/tandem-sanitizer.<pid>: stderr stays the user's error channel (ASan warns
// there about SystemC's stack switches, which would break "one line on stderr").
extern "C" {
const char* __asan_default_options() {
  // SystemC switches coroutine stacks by hand: fake stacks for use-after-return would follow
  // them wrongly. Leak checking is off: LeakSanitizer's tracer faults at exit on SystemC's
  // coroutine stacks in about one run of three ("Tracer caught signal 11", exit 86 on a clean
  // run); ASAN_OPTIONS=detect_leaks=1 turns it on by hand (lsan.supp then applies).
  return "suppressions=" TANDEM_SANITIZE_DIR
         "/asan.supp:detect_leaks=0:detect_stack_use_after_return=0:exitcode=86:"
         "log_path=/tmp/tandem-sanitizer";
}
const char* __lsan_default_options() {
  return "suppressions=" TANDEM_SANITIZE_DIR "/lsan.supp:fast_unwind_on_malloc=0:exitcode=86";
}
const char* __ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1:exitcode=86:log_path=/tmp/tandem-sanitizer";
}
}
