#include "hitch_cxx_exceptions.h"

#include <stdexcept>
#include <string>

namespace {

// A destructor on the way out makes the unwinder run a cleanup (phase 2) in every frame.
struct Guard {
    int *counter;
    ~Guard() { ++*counter; }
};

__attribute__((noinline)) int throw_from(int depth, int value, int *cleanups) {
    Guard guard{cleanups};
    if (depth == 0) throw std::runtime_error(std::to_string(value));
    int below = throw_from(depth - 1, value, cleanups);
    return below + 1; // not a tail call: every frame stays on the stack
}

} // namespace

extern "C" int hitch_test_throw_and_catch(int count) {
    int caught = 0;
    for (int i = 0; i < count; i++) {
        int cleanups = 0;
        try {
            throw_from(4, i, &cleanups);
        } catch (const std::runtime_error &error) {
            if (std::stoi(error.what()) == i && cleanups == 5) caught += 1;
        }
    }
    return caught;
}
