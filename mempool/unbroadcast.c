/*
 * mempool/unbroadcast.c: the unbroadcast set (Core's
 * m_unbroadcast_txids). sendrawtransaction's transactions stay in it until
 * a peer fetches one (relay tells the chain's thread) or the entry leaves
 * the pool; relay re-announces what is left every 10-15 minutes, and
 * mempool.dat keeps it across restarts.
 *
 * A plain array searched linearly: only locally submitted transactions
 * waiting for their first peer are in it, a handful in practice.
 */
#include <string.h>

#include "mempool/internal.h"

static size_t find(const struct mempool *mp, const struct proto_hash *txid)
{
	size_t i = 0;
	while (i < mp->n_unbcast && !proto_hash_eq(&mp->unbcast[i], txid))
		i++;
	return i;
}

void mp_unbroadcast_drop(struct mempool *mp, const struct proto_hash *txid)
{
	size_t i = find(mp, txid);
	if (i < mp->n_unbcast)
		mp->unbcast[i] = mp->unbcast[--mp->n_unbcast];
}

int mempool_unbroadcast_add(struct mempool *mp, const struct proto_hash *txid)
{
	if (!mp_find_txid(mp, txid) || find(mp, txid) < mp->n_unbcast)
		return 0;
	if (mp->n_unbcast == mp->cap_unbcast) {
		size_t cap = mp->cap_unbcast ? mp->cap_unbcast * 2 : 8;
		struct proto_hash *v = xreallocarray(mp->unbcast, cap, sizeof(*v));
		if (!v)
			return CHAIN_ENOMEM;
		mp->unbcast = v;
		mp->cap_unbcast = cap;
	}
	mp->unbcast[mp->n_unbcast++] = *txid;
	return 0;
}

void mempool_unbroadcast_remove(struct mempool *mp, const struct proto_hash *txid)
{
	mp_unbroadcast_drop(mp, txid);
}

bool mempool_is_unbroadcast(const struct mempool *mp, const struct proto_hash *txid)
{
	return find(mp, txid) < mp->n_unbcast;
}

int mempool_unbroadcast_list(const struct mempool *mp, struct proto_hash **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!mp->n_unbcast)
		return 0;
	struct proto_hash *v = xreallocarray(NULL, mp->n_unbcast, sizeof(*v));
	if (!v)
		return CHAIN_ENOMEM;
	memcpy(v, mp->unbcast, mp->n_unbcast * sizeof(*v));
	*out = v;
	*n = mp->n_unbcast;
	return 0;
}
