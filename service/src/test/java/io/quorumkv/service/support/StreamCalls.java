package io.quorumkv.service.support;

import java.util.List;

import io.quorumkv.service.peer.ReplicaStreams;
import io.quorumkv.service.peer.StreamFrames;
import io.quorumkv.service.peer.StreamFrames.Result;
import io.quorumkv.service.peer.StreamResults;
import io.quorumkv.storage.Entry;
import org.jspecify.annotations.Nullable;

/**
 * One replica operation at a time on a node's replica stream ({@code POST
 * /internal/v0/stream}), as a test or an operator's tool speaks to it: a request body of
 * one operation frame (epoch 0: no ring check), an answer of one result. Built on the
 * production codec ({@link StreamFrames}), so that the tests read a replica as the nodes
 * do.
 */
public final class StreamCalls {

	/** The stream's path. */
	public static final String PATH = ReplicaStreams.PATH;

	private static final int BUDGET_MILLIS = 30_000;

	private static final int MAX_FRAME = 64 * 1024 * 1024;

	private StreamCalls() {
	}

	/** The body of a get of {@code key}. */
	public static byte[] get(byte[] key) {
		return StreamFrames.encodeOperation(1, StreamFrames.GET, 0, BUDGET_MILLIS, key, null);
	}

	/** The body of an upsert of {@code entry}. */
	public static byte[] upsert(Entry entry) {
		return StreamFrames.encodeOperation(1, StreamFrames.UPSERT, 0, BUDGET_MILLIS, entry.key(), entry);
	}

	/** The one result of an answer body. */
	public static Result result(byte @Nullable [] body) {
		List<Result> results = StreamResults.decodeAll((body != null) ? body : new byte[0], MAX_FRAME);
		if (results.size() != 1) {
			throw new IllegalStateException("expected one result, got " + results);
		}
		return results.get(0);
	}

	/** The entry of a get's answer body; null when the replica never saw the key. */
	public static @Nullable Entry entry(byte @Nullable [] body) {
		Result result = result(body);
		if (result.type() != StreamFrames.FOUND && result.type() != StreamFrames.ABSENT) {
			throw new IllegalStateException("the replica answered " + result);
		}
		return result.entry();
	}

}
