package io.quorumkv.storage.h2;

import java.util.List;
import java.util.function.Function;

import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One scan as keyset pagination: each page is its own short query ({@code k > lastKey
 * ORDER BY k LIMIT pageSize}) on a connection that is released before the page is
 * emitted.
 *
 * <p>
 * Why pages: r2dbc-h2 runs a query through H2's embedded {@code executeQuery}, which
 * materialises the whole result before the first row is emitted, so one
 * {@code SELECT ... ORDER BY k} over a million keys would hold them all in memory and
 * keep a connection for as long as the consumer is slow. With pages a scan holds at most
 * about three pages (the one being emitted, one queued, one fetched ahead), and a
 * cancelled scan holds no connection at all. Pages are not one snapshot: a key written
 * during the scan shows its newest version if its page had not been read yet; keys never
 * repeat and stay in ascending order.
 */
final class H2Scan {

	/** Fetches one page: (sql, after-or-from key, bounded end) → rows in key order. */
	interface PageQuery {

		Mono<List<Entry>> fetch(String sql, byte[] position, int pageSize, byte @Nullable [] end);

	}

	private final PageQuery query;

	private final int pageSize;

	private final byte @Nullable [] end;

	/** Only touched by the one subscription's serial page fetches. */
	private byte[] position;

	private boolean first = true;

	private boolean done;

	H2Scan(PageQuery query, int pageSize, byte[] from, byte @Nullable [] end) {
		this.query = query;
		this.pageSize = pageSize;
		this.position = from;
		this.end = end;
	}

	Flux<Entry> entries() {
		return Mono.defer(this::nextPage).repeat(() -> !this.done).concatMapIterable(Function.identity(), 1);
	}

	private Mono<List<Entry>> nextPage() {
		String sql = H2Schema.scanPage(this.first, this.end != null);
		return this.query.fetch(sql, this.position, this.pageSize, this.end).doOnNext((page) -> {
			this.first = false;
			this.done = page.size() < this.pageSize;
			if (!page.isEmpty()) {
				this.position = page.getLast().key();
			}
		});
	}

}
