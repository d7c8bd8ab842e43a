package io.quorumkv.storage;

import java.nio.file.Path;
import java.util.List;

import reactor.core.publisher.Mono;

/**
 * An optional capability of a {@link Storage}: an online copy of the store's files that
 * can be verified, read back entry by entry, or put back in place of the data folder. A
 * backend that has it implements this interface beside {@code Storage}; the service asks
 * {@code storage instanceof Snapshots}, and refuses a snapshot of a backend without it.
 *
 * <p>
 * The copy holds every upsert that completed before the subscription (the LSM flushes its
 * memtable first), and may hold later ones. Neither reads nor writes stop for it beyond
 * that flush. The files are written into {@code target}, a folder that exists, is empty
 * and is on the same file system as the store, so that a backend with immutable files
 * (the LSM) links them instead of copying. Nothing else in {@code target} is touched; the
 * caller owns the folder, its manifest and its checksums.
 *
 * <pre>{@code
 * if (storage instanceof Snapshots snapshots) {
 *     List<String> files = snapshots.snapshot(folder).block();
 * }
 * }</pre>
 */
public interface Snapshots {

	/**
	 * Writes the copy into {@code target} and completes with the names of the files it
	 * wrote there (relative to {@code target}, {@code /} between folders), durable once
	 * it completes. On an error, files may have been written into {@code target}.
	 */
	Mono<List<String>> snapshot(Path target);

	/**
	 * Keeps every version the store holds from now on where a later {@link #snapshot}
	 * finds it, until the hold is closed: versions overwritten meanwhile, and older
	 * versions a background merge would drop. A cluster-wide snapshot opens a hold on
	 * every node before it chooses its time {@code T}, so that each node's snapshot has,
	 * for every key, its newest version as of {@code T} even when the key was overwritten
	 * between {@code T} and that node's snapshot (docs/backup.md, "What T guarantees"). A
	 * hold is meant to last one snapshot; close it soon, whatever happens (it costs disk
	 * while open). The default holds nothing: a backend that keeps one row per key (H2,
	 * Derby) cannot keep a version it overwrote, and its snapshots keep that window.
	 */
	default Hold hold() {
		return Hold.NONE;
	}

	/**
	 * The name of the copy's format ({@code "lsm"} for the LSM's tables and manifest),
	 * which tells a reader how to open the files.
	 */
	String snapshotFormat();

	/** An open {@link #hold()}; closing it twice does nothing. */
	@FunctionalInterface
	interface Hold extends AutoCloseable {

		/** A hold that keeps nothing. */
		Hold NONE = () -> {
		};

		@Override
		void close();

	}

}
