/*
 * daemon/ctl_mempool_stubs.c: TEMPORARY weak stand-ins for the parts of
 * chain/mempool.h (and chain/policy.h) that ctl_mempool.c calls, so this
 * branch links before the mempool's implementation (branch `mempool`,
 * chain/mempool.c) lands. Every definition is weak: once chain/ defines the
 * real function (libpeerd.a's member is pulled in by chain_open's own
 * calls into the mempool), the real one wins and these are never called.
 * Delete this file when chain/mempool.c is merged.
 *
 * Until then the control methods answer as for an empty pool that accepts
 * nothing: every transaction is rejected with "no-mempool".
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "chain/chain.h"

#define WEAK __attribute__((weak))

WEAK void chain_accept_result_init(struct chain_accept_result *r)
{
	memset(r, 0, sizeof(*r));
}

WEAK void chain_accept_result_release(struct chain_accept_result *r)
{
	xfree(r->effective_includes);
	xfree(r->replaced_txids);
	xfree(r->replaced_wtxids);
	xfree(r->missing_parents);
	memset(r, 0, sizeof(*r));
}

static void no_mempool(struct proto_tx *tx, struct chain_accept_result *r)
{
	chain_accept_result_release(r);
	proto_tx_compute_ids(tx);
	r->txid = tx->txid;
	r->wtxid = tx->wtxid;
	r->validated = true;
	r->state.result = CHAIN_RESULT_TX_NO_MEMPOOL;
	snprintf(r->state.reason, sizeof(r->state.reason), "no-mempool");
}

WEAK int chain_mempool_accept(struct chain *c, struct proto_tx *tx,
                              const struct chain_accept_opts *opts, struct chain_accept_result *r)
{
	(void)c;
	(void)opts;
	no_mempool(tx, r);
	return 0;
}

WEAK int chain_mempool_test_package(struct chain *c, struct proto_tx *const *txs, size_t n,
                                    struct chain_accept_result *results,
                                    struct chain_package_state *pkg)
{
	(void)c;
	memset(pkg, 0, sizeof(*pkg));
	pkg->result = CHAIN_PACKAGE_TX;
	snprintf(pkg->reason, sizeof(pkg->reason), "transaction failed");
	for (size_t i = 0; i < n; i++)
		no_mempool(txs[i], &results[i]);
	return 0;
}

WEAK const struct chain_mempool_entry *chain_mempool_find(struct chain *c,
                                                          const struct proto_hash *id, bool wtxid)
{
	(void)c;
	(void)id;
	(void)wtxid;
	return NULL;
}

WEAK void chain_mempool_entry_info(const struct chain_mempool_entry *e,
                                   struct chain_mempool_entry_info *out)
{
	(void)e;
	memset(out, 0, sizeof(*out));
}

WEAK const struct proto_hash *chain_mempool_entry_txid(const struct chain_mempool_entry *e)
{
	(void)e;
	static const struct proto_hash zero;
	return &zero;
}

WEAK size_t chain_mempool_entry_parents(const struct chain_mempool_entry *e,
                                        const struct chain_mempool_entry **out, size_t cap)
{
	(void)e;
	(void)out;
	(void)cap;
	return 0;
}

WEAK size_t chain_mempool_entry_children(const struct chain_mempool_entry *e,
                                         const struct chain_mempool_entry **out, size_t cap)
{
	(void)e;
	(void)out;
	(void)cap;
	return 0;
}

WEAK int chain_mempool_get_raw(struct chain *c, const struct proto_hash *id, bool wtxid,
                               uint8_t **raw, size_t *len)
{
	(void)c;
	(void)id;
	(void)wtxid;
	*raw = NULL;
	*len = 0;
	return CHAIN_ENOTFOUND;
}

WEAK int chain_mempool_list(struct chain *c, enum chain_mempool_order order,
                            const struct chain_mempool_entry ***out, size_t *n)
{
	(void)c;
	(void)order;
	*out = NULL;
	*n = 0;
	return 0;
}

WEAK int chain_mempool_ancestors(struct chain *c, const struct chain_mempool_entry *e,
                                 const struct chain_mempool_entry ***out, size_t *n)
{
	(void)c;
	(void)e;
	*out = NULL;
	*n = 0;
	return 0;
}

WEAK int chain_mempool_descendants(struct chain *c, const struct chain_mempool_entry *e,
                                   const struct chain_mempool_entry ***out, size_t *n)
{
	(void)c;
	(void)e;
	*out = NULL;
	*n = 0;
	return 0;
}

WEAK void chain_mempool_get_info(struct chain *c, struct chain_mempool_info *out)
{
	(void)c;
	memset(out, 0, sizeof(*out));
	out->maxmempool = CHAIN_MEMPOOL_DEFAULT_MAX_BYTES;
	out->mempoolminfee = out->minrelaytxfee = out->incrementalrelayfee = 1000;
	out->fullrbf = true;
}

WEAK uint64_t chain_mempool_sequence(const struct chain *c)
{
	(void)c;
	return 1;
}

WEAK int chain_mempool_save(struct chain *c)
{
	(void)c;
	return CHAIN_EIO;
}

WEAK const char *chain_mempool_path(const struct chain *c)
{
	(void)c;
	return "";
}

WEAK int64_t chain_feerate_fee(int64_t sat_per_kvb, int64_t vsize)
{
	int64_t fee = sat_per_kvb * vsize / 1000;
	if (fee == 0 && vsize != 0 && sat_per_kvb > 0)
		fee = 1;
	return fee;
}
