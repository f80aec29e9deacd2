/*
 * daemon/txrelay/feefilter.c: the feefilter peerd sends each peer (Core 29's
 * MaybeSendFeefilter and FeeFilterRounder): the mempool's minimum fee,
 * rounded to a coarse bucket, sent again after a random interval or soon
 * after a large change; the highest possible fee during initial block
 * download. Moved out of announce.c (issue 19) with no change.
 */
#include "daemon/txrelay/txrelay.h"

#include <stdatomic.h>

#include "daemon/txrelay/internal.h"

void txrelay_feefilter_init(struct txrelay_state *r)
{
	/* Core's FeeFilterRounder over incrementalrelayfee (1,000 sat/kvB):
	 * 0, then 500 times 1.1^k up to 1e7 sat/kvB, as doubles. */
	r->n_buckets = 0;
	r->buckets[r->n_buckets++] = 0;
	for (double b = DAEMON_FEEFILTER_SAT_KVB / 2;
	     b <= 1e7 && r->n_buckets < RELAY_FEE_BUCKETS_MAX; b *= 1.1)
		r->buckets[r->n_buckets++] = b;
}

int64_t txrelay_round_fee(const struct daemon *d, int64_t fee, uint64_t coin)
{
	const struct txrelay_state *r = d->txr;
	uint32_t i = 0;
	while (i < r->n_buckets && r->buckets[i] < (double)fee)
		i++;
	/* Past the top, or (two times in three) one bucket down: the filter
	 * sent says little about the exact minimum fee. */
	if (i == r->n_buckets || (i > 0 && coin % 3 != 0))
		i--;
	return (int64_t)r->buckets[i];
}

void txrelay_maybe_feefilter(struct peer *p, uint64_t now)
{
	struct daemon *d = p->d;
	struct relay_peer *rp = p->txr;
	int32_t common = p->version < PROTO_VERSION ? p->version : PROTO_VERSION;
	/* Core sends no feefilter under -blocksonly, nor to a block-relay-only
	 * peer: no transactions wanted. */
	if (common < PEER_FEEFILTER_VERSION || peer_rejects_txs(p))
		return;
	int64_t current = atomic_load_explicit(&d->txr->minfee, memory_order_relaxed);
	if (d->view->ibd)
		current = PROTO_MAX_MONEY;
	else if (p->sent_feefilter == DAEMON_FEEFILTER_IBD_SAT_KVB)
		rp->next_feefilter_ms = 0;
	if (now > rp->next_feefilter_ms || rp->next_feefilter_ms == 0) {
		int64_t send = txrelay_round_fee(d, current, proto_random_u64());
		if (send < DAEMON_FEEFILTER_SAT_KVB)
			send = DAEMON_FEEFILTER_SAT_KVB;
		if (send != p->sent_feefilter) {
			d->out.cmd = PROTO_CMD_FEEFILTER;
			d->out.feerate = send;
			if (peer_send_msg(p, &d->out) == 0) {
				p->sent_feefilter = send;
				d->txr->st.feefilters_sent++;
			}
		}
		rp->next_feefilter_ms = now + txrelay_exp_delay_ms(RELAY_FEEFILTER_INTERVAL_MS);
		if (!rp->next_feefilter_ms)
			rp->next_feefilter_ms = 1;
	} else if (now + RELAY_FEEFILTER_CHANGE_DELAY_MS < rp->next_feefilter_ms &&
	           (current < 3 * p->sent_feefilter / 4 || current > 4 * p->sent_feefilter / 3)) {
		/* A big change goes out within 5 minutes, at a random moment. */
		rp->next_feefilter_ms = now + proto_random_u64() % RELAY_FEEFILTER_CHANGE_DELAY_MS;
	}
}
