/*
 * daemon/sync_hooks.c: sync/'s hooks, what sync/ asks of its sibling
 * txrelay/ without naming it (the two never call each other).
 *
 * A getdata is answered in order, blocks and transactions mixed
 * (sync/serve.c, as Core's ProcessGetData); a transaction entry is served
 * from txrelay/'s mempool mirror through struct sync_hooks'
 * serve_tx (daemon/sync/sync.h), which daemon_init points at this table.
 */
#include "daemon/program.h"

const struct sync_hooks daemon_sync_hooks = {
    /* txrelay/announce.c: the mirror, or the most recent block's. */
    .serve_tx = txrelay_serve,
};
