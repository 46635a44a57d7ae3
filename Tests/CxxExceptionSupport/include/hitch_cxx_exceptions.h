#ifndef HITCH_CXX_EXCEPTIONS_H
#define HITCH_CXX_EXCEPTIONS_H
// Test support only (never in a library product): C++ exceptions thrown and caught under sampling,
// so the sampler's signals and the kernel's samples land inside libgcc's two-phase unwind (search
// and cleanup/landing pads) and libstdc++'s personality routine.
#ifdef __cplusplus
extern "C" {
#endif

/// Throws a std::runtime_error through a few frames and catches it, `count` times; returns how many
/// were caught carrying the value they were thrown with.
int hitch_test_throw_and_catch(int count);

#ifdef __cplusplus
}
#endif
#endif
