// PostgreSQL's client library (Debian libpq-dev): the history store for a fleet of CI runners.
#include <postgresql/libpq-fe.h>
