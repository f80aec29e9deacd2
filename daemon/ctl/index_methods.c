/*
 * daemon/ctl/index_methods.c: getindexinfo and getblockfilter, as Bitcoin
 * Core 29's rpc/node.cpp and rpc/blockchain.cpp, over index/'s databases.
 * Chain methods: the indexes belong to the validation thread.
 */
#include "daemon/ctl/internal.h"

#include <string.h>

#include "chain/chain.h"
#include "index/index.h"
#include "json/json.h"

/* Core's SummaryToJSON: {name: {synced, best_block_height}}, or nothing
 * when a name was asked for and this is another. */
static void summary(json_t *o, struct chain *c, struct index_set *s, enum index_kind k,
                    const char *want)
{
	if (!index_set_has(s, k) || (want && strcmp(want, index_name(k)) != 0))
		return;
	int32_t height;
	bool synced;
	index_set_status(s, c, k, &height, &synced);
	json_t *e = json_object();
	if (!e)
		return;
	json_object_set_new(e, "synced", json_boolean(synced));
	json_object_set_new(e, "best_block_height", json_integer(height));
	json_object_set_new(o, index_name(k), e);
}

void ctl_m_getindexinfo(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                        struct ctl_result *res)
{
	json_t *name = ctl_arg(args, 0);
	const char *want = name ? json_string_value(name) : NULL;
	if (want && !*want)
		want = NULL;
	json_t *o = json_object();
	if (o) {
		/* Core's order: txindex, coinstatsindex, then the filter indexes. */
		summary(o, c, x->indexes, INDEX_TX, want);
		summary(o, c, x->indexes, INDEX_COINSTATS, want);
		summary(o, c, x->indexes, INDEX_FILTER_BASIC, want);
	}
	ctl_ok(res, o);
}

void ctl_m_getblockfilter(struct chain *c, const struct ctl_chain_ctx *x, json_t *args,
                          struct ctl_result *res)
{
	struct proto_hash h;
	if (!ctl_param_hash(ctl_arg(args, 0), "blockhash", &h, res))
		return;
	json_t *ft = ctl_arg(args, 1);
	const char *type = ft ? json_string_value(ft) : "basic";
	if (strcmp(type, "basic") != 0) {
		ctl_fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Unknown filtertype");
		return;
	}
	if (!index_set_has(x->indexes, INDEX_FILTER_BASIC)) {
		ctl_fail(res, CTL_MISC_ERROR, "Index is not enabled for filtertype %s", type);
		return;
	}
	struct chain_node *n = chain_index_find(chain_get_index(c), &h);
	if (!n) {
		ctl_fail(res, CTL_INVALID_ADDRESS_OR_KEY, "Block not found");
		return;
	}
	bool connected = chain_node_level(n) >= CHAIN_VALID_SCRIPTS;
	int32_t height;
	bool synced;
	index_set_status(x->indexes, c, INDEX_FILTER_BASIC, &height, &synced);
	uint8_t *filter = NULL;
	size_t len = 0;
	struct proto_hash header;
	int err = index_filter_find(x->indexes, &h, &filter, &len, &header);
	if (err == INDEX_ENOMEM) {
		ctl_fail(res, CTL_INTERNAL_ERROR, "out of memory");
		return;
	}
	if (err) {
		/* Core's three reasons, in its order. */
		if (!connected)
			ctl_fail(res, CTL_INVALID_ADDRESS_OR_KEY,
			         "Filter not found. Block was not connected to active chain.");
		else if (!synced)
			ctl_fail(
			    res, CTL_MISC_ERROR,
			    "Filter not found. Block filters are still in the process of being "
			    "indexed.");
		else
			ctl_fail(res, CTL_INTERNAL_ERROR,
			         "Filter not found. This error is unexpected and indicates index "
			         "corruption.");
		return;
	}
	json_t *o = json_object();
	if (o) {
		json_object_set_new(o, "filter", json_hex(filter, len));
		json_object_set_new(o, "header", json_hash(&header));
	}
	xfree(filter);
	ctl_ok(res, o);
}
