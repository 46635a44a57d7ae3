// zlib (Debian zlib1g-dev): inflates Perfetto's compressed_packets.
#include <zlib.h>
