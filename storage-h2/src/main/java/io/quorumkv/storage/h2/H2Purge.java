package io.quorumkv.storage.h2;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.quorumkv.storage.PurgePolicy;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import org.springframework.r2dbc.core.DatabaseClient;

/**
 * One purge pass: the tombstones in pages of keys ({@code WHERE (v IS NULL OR exp <= now)
 * AND k > last ORDER BY k LIMIT n}; a value expired by the pass's {@code now} is the
 * tombstone of its timestamp), each page's tombstones that the policy allows deleted in
 * one transaction with one statement and a binding each. The delete names the tombstone's
 * timestamp ({@code k = ? AND ts = ? AND (v IS NULL OR exp <= now)}), so a version
 * written since the page was read stays: the pass never undoes a write. In key order,
 * like every list of upserts, so the two cannot deadlock on each other.
 */
final class H2Purge {

	/** One page read and purged: where the next starts (null: the last page). */
	private record Page(byte @Nullable [] next, long purged) {
	}

	private record Tombstone(byte[] key, long timestamp) {
	}

	private final DatabaseClient client;

	private final Scheduler scheduler;

	private final int pageSize;

	private final PurgePolicy policy;

	private final long now;

	/** A pass judging expiry at {@code now}, in microseconds. */
	H2Purge(DatabaseClient client, Scheduler scheduler, int pageSize, PurgePolicy policy, long now) {
		this.client = client;
		this.scheduler = scheduler;
		this.pageSize = pageSize;
		this.policy = policy;
		this.now = now;
	}

	/** The number of tombstones dropped. */
	Mono<Long> run() {
		return page(null).expand((page) -> (page.next() != null) ? page(page.next()) : Mono.empty())
			.map(Page::purged)
			.reduce(0L, Long::sum);
	}

	private Mono<Page> page(byte @Nullable [] after) {
		DatabaseClient.GenericExecuteSpec select = (after == null)
				? this.client.sql(H2Schema.TOMBSTONES_FIRST_PAGE).bind(0, this.pageSize).bind(1, this.now)
				: this.client.sql(H2Schema.TOMBSTONES_NEXT_PAGE)
					.bind(0, this.pageSize)
					.bind(1, after)
					.bind(2, this.now);
		return select
			.map((row) -> new Tombstone(Objects.requireNonNull(row.get(0, byte[].class), "k"),
					Objects.requireNonNull(row.get(1, Long.class), "ts")))
			.all()
			.collectList()
			.subscribeOn(this.scheduler)
			.flatMap((tombstones) -> {
				byte[] next = (tombstones.size() < this.pageSize) ? null : tombstones.getLast().key();
				List<Tombstone> allowed = new ArrayList<>();
				for (Tombstone tombstone : tombstones) {
					if (this.policy.mayPurge(tombstone.key(), tombstone.timestamp())) {
						allowed.add(tombstone);
					}
				}
				return delete(allowed).map((purged) -> new Page(next, purged));
			});
	}

	private Mono<Long> delete(List<Tombstone> tombstones) {
		if (tombstones.isEmpty()) {
			return Mono.just(0L);
		}
		return this.client.inConnection((connection) -> Mono.from(connection.beginTransaction())
			.thenMany(Flux.defer(() -> statement(connection, tombstones).execute()))
			.concatMap(Result::getRowsUpdated)
			.reduce(0L, Long::sum)
			.flatMap((deleted) -> Mono.from(connection.commitTransaction()).thenReturn(deleted))
			.onErrorResume((ex) -> Mono.from(connection.rollbackTransaction()).onErrorComplete().then(Mono.error(ex))))
			.subscribeOn(this.scheduler);
	}

	private Statement statement(Connection connection, List<Tombstone> tombstones) {
		Statement statement = connection.createStatement(H2Schema.PURGE);
		for (int i = 0; i < tombstones.size(); i++) {
			if (i > 0) {
				statement.add();
			}
			statement.bind(0, tombstones.get(i).key()).bind(1, tombstones.get(i).timestamp()).bind(2, this.now);
		}
		return statement;
	}

}
