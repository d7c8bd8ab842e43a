package io.quorumkv.service.replication;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The pages of a range read: the coordinator asks each member for a page of its local
 * entries at a time, tombstones and older versions included, and for the next page only
 * when its merge needs it (docs/architecture.md). A page is the client's limit plus
 * {@code pageSlack}, at least {@code minPage} and at most {@code maxPage} entries; a
 * range without a limit reads pages of {@code maxPage}.
 *
 * @param minPage fewest entries a member is asked for at once
 * @param maxPage most entries a member is asked for at once: what one page costs a member
 * and the coordinator is bounded by it
 * @param pageSlack entries a page asks for beyond the limit, for the tombstones and older
 * versions the merge drops, so that one page per member usually ends a scan
 */
@ConfigurationProperties("quorumkv.cluster.scan")
public record ScanProperties(@DefaultValue("64") int minPage, @DefaultValue("1000") int maxPage,
		@DefaultValue("64") int pageSlack) {

	public ScanProperties {
		if (minPage < 1 || maxPage < minPage || maxPage > 100_000) {
			throw new IllegalArgumentException(
					"quorumkv.cluster.scan.min-page and max-page must be 1 <= min-page <= max-page <= 100000");
		}
		if (pageSlack < 0 || pageSlack > 100_000) {
			throw new IllegalArgumentException("quorumkv.cluster.scan.page-slack must be 0..100000");
		}
	}

	/** The page a member is asked for, for a range read of at most {@code limit}. */
	public int pageSize(long limit) {
		// No limit is Long.MAX_VALUE: cut it to a page before adding the slack.
		long wanted = Math.min(limit, this.maxPage) + this.pageSlack;
		return (int) Math.max(this.minPage, Math.min(this.maxPage, wanted));
	}

}
