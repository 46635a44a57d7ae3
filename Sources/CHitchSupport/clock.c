#include "hitch_clock.h"
