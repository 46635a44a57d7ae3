// libunwind's local-only API: we only ever unwind our own process.
#define UNW_LOCAL_ONLY
#include <libunwind.h>
