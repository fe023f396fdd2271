/* The POSIX thread functions Rust's standard library for wasm32-wasip1 links against, for a C
 * library that has none: Debian 12's wasi-libc (2022) predates the single-threaded stubs newer
 * wasi-libc releases carry. wasm32-wasip1 has no threads, so starting one fails as it does with
 * those stubs: std::thread::Builder::spawn returns an error (std::thread::spawn panics), and
 * Phalanx's code runs on its single-thread path (docs/determinism.md). scripts/cross-check
 * compiles this file with clang and links it into the wasm32 programs. */
#include <errno.h>
#include <stddef.h>

int pthread_attr_init(void *attr) { (void)attr; return 0; }
int pthread_attr_destroy(void *attr) { (void)attr; return 0; }
int pthread_attr_setstacksize(void *attr, size_t size) { (void)attr; (void)size; return 0; }
int pthread_create(void *thread, const void *attr, void *(*start)(void *), void *arg) {
  (void)thread; (void)attr; (void)start; (void)arg;
  return EAGAIN;
}
int pthread_join(void *thread, void **result) { (void)thread; (void)result; return ESRCH; }
int pthread_detach(void *thread) { (void)thread; return ESRCH; }
