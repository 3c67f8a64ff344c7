/* store_schema: the schema's history as migrations, one list per engine. The SQL is the
 * same for both but for the JSON type (jsonb in PostgreSQL, text in SQLite); docs/store.md
 * shows it. A new version is a new entry at the end: never edit one that shipped. */
#include "store_int.h"

#include "array.h"

/* Version 1: the tables. started_at is seconds since the epoch (UTC), so both engines
 * compare and window it the same way; ok is 0/1. No foreign key from runs to invocations:
 * a run is written as it ends, before its invocation's row, and imported runs have none. */
#define SCHEMA_V1(JSON)                                                                              \
    "CREATE TABLE invocations ("                                                                     \
    " invocation_id TEXT PRIMARY KEY,"                                                               \
    " started_at DOUBLE PRECISION NOT NULL,"                                                         \
    " finished_at DOUBLE PRECISION,"                                                                 \
    " vantage TEXT NOT NULL,"                                                                        \
    " client_kernel TEXT,"                                                                           \
    " client_offloads TEXT,"                                                                         \
    " debit_version TEXT,"                                                                           \
    " argv TEXT,"                                                                                    \
    " runs INTEGER,"                                                                                 \
    " runs_ok INTEGER,"                                                                              \
    " summary " JSON ");"                                                                            \
    "CREATE TABLE runs ("                                                                            \
    " run_id TEXT PRIMARY KEY,"                                                                      \
    " invocation_id TEXT,"                                                                           \
    " started_at DOUBLE PRECISION NOT NULL,"                                                         \
    " vantage TEXT NOT NULL,"                                                                        \
    " client_kernel TEXT,"                                                                           \
    " client_offloads TEXT,"                                                                         \
    " server TEXT NOT NULL,"                                                                         \
    " url TEXT,"                                                                                     \
    " remote_ip TEXT,"                                                                               \
    " family INTEGER,"                                                                               \
    " scenario TEXT,"                                                                                \
    " variant TEXT,"                                                                                 \
    " protocol TEXT,"                                                                                \
    " direction TEXT,"                                                                               \
    " streams INTEGER,"                                                                              \
    " bytes BIGINT,"                                                                                 \
    " avg_mbps DOUBLE PRECISION,"                                                                    \
    " rtt_ms DOUBLE PRECISION,"                                                                      \
    " limited_by TEXT,"                                                                              \
    " predicted_mbps DOUBLE PRECISION,"                                                              \
    " ok INTEGER NOT NULL,"                                                                          \
    " error_kind TEXT,"                                                                              \
    " run " JSON " NOT NULL);"

/* Version 2: the indexes `debit history` needs (bench/store.sh: 1,000,000 runs). The
 * (vantage, server, avg_mbps) index of successful runs answers --by vantage,server from
 * the index alone, in the order the median polish reads it. */
#define SCHEMA_V2                                                                                    \
    "CREATE INDEX runs_started_at ON runs (started_at);"                                             \
    "CREATE INDEX runs_server_started ON runs (server, started_at);"                                 \
    "CREATE INDEX runs_cells ON runs (vantage, server, avg_mbps) WHERE ok = 1;"                      \
    "CREATE INDEX invocations_started_at ON invocations (started_at);"

static const struct store_migration sqlite_migrations[] = {
    {1, SCHEMA_V1("TEXT")},
    {2, SCHEMA_V2},
};

static const struct store_migration pg_migrations[] = {
    {1, SCHEMA_V1("JSONB")},
    {2, SCHEMA_V2},
};

const struct store_migration *store_schema_migrations(enum store_kind kind, size_t *n)
{
    if (kind == STORE_PG) {
        *n = ARRAY_SIZE(pg_migrations);
        return pg_migrations;
    }
    *n = ARRAY_SIZE(sqlite_migrations);
    return sqlite_migrations;
}
