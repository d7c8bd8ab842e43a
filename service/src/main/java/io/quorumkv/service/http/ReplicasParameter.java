package io.quorumkv.service.http;

import io.quorumkv.service.replication.Replicas;
import org.jspecify.annotations.Nullable;

/**
 * Reads {@code replicas=ACK/FROM} or {@code ack=ACK&from=FROM} from a request; absent
 * means {@link Replicas#quorum(int)} of the replication factor. {@code from} is at most
 * the replication factor.
 */
final class ReplicasParameter {

	private ReplicasParameter() {
	}

	/**
	 * Reads the parameters of a request; absent means {@link #quorum(int)}.
	 * @throws ApiException (400) when malformed or out of range
	 */
	static Replicas parse(@Nullable String replicas, @Nullable String ack, @Nullable String from,
			int replicationFactor) {
		if (replicas != null && (ack != null || from != null)) {
			throw ApiException.badRequest("give either replicas=ACK/FROM or ack=ACK&from=FROM, not both");
		}
		if (replicas == null && ack == null && from == null) {
			return Replicas.quorum(replicationFactor);
		}
		int a;
		int f;
		if (replicas != null) {
			int slash = replicas.indexOf('/');
			if (slash < 0) {
				throw ApiException.badRequest("replicas must be ACK/FROM, got '" + printable(replicas) + "'");
			}
			a = number(replicas, 0, slash, "ack");
			f = number(replicas, slash + 1, replicas.length(), "from");
		}
		else {
			f = (from != null) ? number(from, 0, from.length(), "from") : replicationFactor;
			a = (ack != null) ? number(ack, 0, ack.length(), "ack") : Replicas.majority(f);
		}
		if (a < 1) {
			throw ApiException.badRequest("ack must be at least 1, got " + a);
		}
		if (a > f) {
			throw ApiException.badRequest("ack (" + a + ") must not exceed from (" + f + ")");
		}
		if (f > replicationFactor) {
			throw ApiException
				.badRequest("from (" + f + ") exceeds the replication factor (" + replicationFactor + ")");
		}
		return new Replicas(a, f);
	}

	/** The decimal number {@code text[from, to)}: 1 to 9 ASCII digits. */
	private static int number(String text, int from, int to, String name) {
		if (to == from || to - from > 9) {
			throw notANumber(text, from, to, name);
		}
		int value = 0;
		for (int i = from; i < to; i++) {
			char c = text.charAt(i);
			if (c < '0' || c > '9') {
				throw notANumber(text, from, to, name);
			}
			value = value * 10 + (c - '0');
		}
		return value;
	}

	private static ApiException notANumber(String text, int from, int to, String name) {
		return ApiException.badRequest(
				name + " must be a small non-negative integer, got '" + printable(text.substring(from, to)) + "'");
	}

	private static String printable(String text) {
		String cut = (text.length() > 32) ? text.substring(0, 32) + "..." : text;
		return cut.replaceAll("\\p{Cntrl}", "?");
	}

}
