/*
 * daemon/sync/cmpct.c: BIP152's cmpctblock, getblocktxn and blocktxn as
 * they arrive (the message table's entries, daemon/msgtable.c).
 *
 * Today only the place for them: the messages are decoded (proto/), so a
 * malformed one counts as a decode error, and then ignored, as peerd did
 * while they were unknown commands. The codecs and the reconstruction
 * (cmpct/) are complete and tested; what the daemon still needs is
 * described in doc/p2p.md ("Compact blocks"): accepting a cmpctblock
 * under Core's conditions, asking getblocktxn, falling back to getdata,
 * and serving cmpctblock and blocktxn.
 */
#include "daemon/sync/sync.h"

static void ignore(struct peer *p, const char *what)
{
	DLOG_DBG(&p->d->log, DLOG_MSG, "ignoring %s from peer=%llu: compact block relay not active",
	         what, (unsigned long long)p->id);
}

void cmpct_on_cmpctblock(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	ignore(p, "cmpctblock");
}

void cmpct_on_getblocktxn(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	ignore(p, "getblocktxn");
}

void cmpct_on_blocktxn(struct peer *p, const struct proto_msg *m)
{
	(void)m;
	ignore(p, "blocktxn");
}
