/*
 * daemon/node/chainview.c: the loop thread's copy of the active chain.
 *
 * The loop answers getheaders, names blocks in announcements and puts the
 * height in its version message without calling into chain/, which only
 * the validation thread may touch. So the validation thread tells the loop
 * what changed after every job that moved the tip (node/validation.c
 * chainview_update_new, run there): the height of the last block both
 * chains share and the headers of the new blocks above it. The loop applies
 * the update in its done callback (chainview_apply): drop what lies above
 * the fork, append the rest. Updates arrive in the order they were made,
 * through the same queue as every result, so the view is always a chain
 * the validation thread once had, never a mix. The first view, the chain
 * as opened, is built and applied on the loop thread in validation_start,
 * before the thread or any peer exists, so the view is never empty.
 *
 * Memory: one record (hash + 80-byte header, 112 bytes) per block of the
 * active chain, plus a fingerprint index; on main at 900,000 blocks that is
 * about 120 MB, the price of answering getheaders without a lock.
 *
 * Ownership: the view belongs to the loop thread; an update is built by the
 * validation thread and, once posted, belongs to the loop (freed by
 * chainview_apply's caller).
 */
#include "daemon/node/node.h"

#include <errno.h>
#include <string.h>

#include "chain/chain.h"

/* First capacity of the record array; it doubles from there. */
#define CHAINVIEW_INITIAL_CAP 1024u

void chainview_init(struct chainview *v)
{
	memset(v, 0, sizeof(*v));
	hmap_init(&v->idx);
	v->unknown_rules_bit = -1;
}

void chainview_release(struct chainview *v)
{
	xfree(v->recs);
	hmap_release(&v->idx);
	memset(v, 0, sizeof(*v));
}

static uint64_t fp(const struct daemon *d, const struct proto_hash *h)
{
	return daemon_fingerprint(d, h->b, sizeof(h->b));
}

int32_t chainview_find(const struct daemon *d, const struct proto_hash *h)
{
	const struct chainview *v = d->view;
	uint32_t height;
	if (!hmap_get(&v->idx, fp(d, h), &height) || height >= v->n)
		return -1;
	/* The fingerprint is salted but 64 bits: compare the real hash. */
	return proto_hash_eq(&v->recs[height].hash, h) ? (int32_t)height : -1;
}

int32_t chainview_height(const struct daemon *d)
{
	return (int32_t)d->view->n - 1;
}

const struct chainview_rec *chainview_at(const struct daemon *d, int32_t height)
{
	if (height < 0 || (uint32_t)height >= d->view->n)
		return NULL;
	return &d->view->recs[height];
}

int chainview_apply(struct daemon *d, const struct chainview_update *u)
{
	struct chainview *v = d->view;
	v->ibd = u->ibd;
	uint32_t keep = (uint32_t)(u->fork_height + 1);
	if (keep > v->n)
		return -EINVAL;
	while (v->n > keep) {
		v->n--;
		(void)hmap_del(&v->idx, fp(d, &v->recs[v->n].hash));
	}
	if (u->n > UINT32_MAX - v->n)
		return -EOVERFLOW;
	uint32_t need = v->n + u->n;
	if (need > v->cap) {
		uint32_t ncap = v->cap ? v->cap : CHAINVIEW_INITIAL_CAP;
		while (ncap < need)
			ncap = ncap > UINT32_MAX / 2 ? need : ncap * 2;
		struct chainview_rec *r = xreallocarray(v->recs, ncap, sizeof(*r));
		if (!r)
			return -ENOMEM;
		v->recs = r;
		v->cap = ncap;
	}
	for (uint32_t i = 0; i < u->n; i++) {
		v->recs[v->n] = u->recs[i];
		if (hmap_put(&v->idx, fp(d, &u->recs[i].hash), v->n))
			return -ENOMEM;
		v->n++;
	}
	return 0;
}

/* What an update says of the chain at tip besides its blocks. The fork
 * warning is judged unless `first`: the chain as opened is not judged
 * (nor logged) before its next tip, as Core's CheckForkWarningConditions
 * runs on tip updates and invalid blocks found, not at load. */
static void fill_state(struct chain *c, const struct chain_node *tip, struct chainview_update *u,
                       bool first)
{
	/* Core's IsInitialBlockDownload is true while importing (a reindex). */
	u->ibd = chain_in_ibd(c) || chain_reindex_pending(c);
	u->unknown_rules_bit = -1;
	u->fork_warning = first ? -1 : (int8_t)chain_fork_warning(c);
	if (!u->ibd) {
		uint32_t active = chain_vb_unknown_rules(chain_get_vb(c), tip, NULL);
		for (int bit = 0; active && bit < CHAIN_VB_WARN_BITS; bit++)
			if (active & (1u << bit)) {
				u->unknown_rules_bit = bit;
				break;
			}
	}
}

struct chainview_update *chainview_update_state(struct chain *c)
{
	const struct chain_node *tip = chain_tip(c);
	struct chainview_update *u = xmalloc(sizeof(*u));
	if (!u)
		return NULL;
	memset(u, 0, sizeof(*u));
	u->fork_height = u->old_height = tip->height;
	fill_state(c, tip, u, false);
	return u;
}

struct chainview_update *chainview_update_new(struct chain *c, const struct chain_node **published)
{
	const struct chain_node *tip = chain_tip(c);
	if (tip == *published)
		return NULL;
	/* The fork is the last block both the published chain and the active
	 * one contain; nothing was published yet: below genesis. */
	int32_t fork_height = -1;
	if (*published) {
		const struct chain_node *f =
		    chain_node_fork((struct chain_node *)*published, (struct chain_node *)tip);
		fork_height = f ? f->height : -1;
	}
	uint32_t n = (uint32_t)(tip->height - fork_height);
	struct chainview_update *u = xmalloc(sizeof(*u) + (size_t)n * sizeof(u->recs[0]));
	if (!u)
		return NULL;
	memset(u, 0, sizeof(*u));
	u->fork_height = fork_height;
	u->n = n;
	u->old_height = *published ? (*published)->height : -1;
	fill_state(c, tip, u, !*published);
	const struct chain_node *at = tip;
	for (uint32_t i = n; i-- > 0; at = at->prev) {
		struct proto_block_header h;
		chain_node_header(at, &h);
		u->recs[i].hash = at->hash;
		struct proto_writer w;
		proto_writer_init_fixed(&w, u->recs[i].header, sizeof(u->recs[i].header));
		proto_block_header_encode(&h, &w);
	}
	*published = tip;
	return u;
}
