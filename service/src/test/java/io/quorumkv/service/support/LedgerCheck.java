package io.quorumkv.service.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads every key of a {@link Ledger} back and compares with what clients were told.
 *
 * @param checked keys read
 * @param lost certain keys whose acknowledged value is not what a read returns
 * @param resurrected keys whose last acknowledged write is a delete and that read back a
 * value
 * @param impossible keys that read a state no client ever wrote or was refused
 * @param unreadable keys whose read did not answer 200 or 404 (after retries)
 * @param retried reads retried after a 5xx or no answer
 * @param examples a few of the failures, for the message
 */
public record LedgerCheck(int checked, int lost, int resurrected, int impossible, int unreadable, int retried,
		List<String> examples) {

	public boolean clean() {
		return this.lost == 0 && this.resurrected == 0 && this.impossible == 0 && this.unreadable == 0;
	}

	/** How a check reads the state of one key: a value, {@link Ledger#GONE}, or null. */
	@FunctionalInterface
	public interface Reader {

		/** The key's state, or null when it could not be read. */
		@org.jspecify.annotations.Nullable
		String state(String key);

	}

	/** Reads every key of a ledger with {@code reader}. */
	public static LedgerCheck read(Ledger ledger, Reader reader) {
		Counts counts = new Counts();
		for (String key : ledger.keys()) {
			counts.check(ledger, key, reader.state(key), "unreadable");
		}
		return counts.result();
	}

	/** Reads every key through a node's public API at {@code replicas}. */
	public static LedgerCheck publicRead(Ledger ledger, KvClient client, String baseUrl, String replicas) {
		Counts counts = new Counts();
		for (String key : ledger.keys()) {
			KvClient.Answer answer = client.get(baseUrl, key, replicas);
			// A client retries a 504 or 503: availability, not data; counted apart.
			for (int attempt = 0; attempt < 3 && answer.status() != 200 && answer.status() != 404; attempt++) {
				counts.retried++;
				sleepQuietly(200);
				answer = client.get(baseUrl, key, replicas);
			}
			String state = switch (answer.status()) {
				case 200 -> answer.body();
				case 404 -> Ledger.GONE;
				default -> null;
			};
			counts.check(ledger, key, state, "status " + answer.status());
		}
		return counts.result();
	}

	/**
	 * Reads every key from one replica's own storage at 1/1 (internal API): a tombstone
	 * and absence both count as gone.
	 */
	public static LedgerCheck replicaRead(Ledger ledger, KvClient client, String baseUrl) {
		Counts counts = new Counts();
		for (String key : ledger.keys()) {
			KvClient.Local local = client.local(baseUrl, key);
			String state = (local.status() == 200) ? (local.tombstone() ? Ledger.GONE : local.value())
					: (local.status() == 404) ? Ledger.GONE : null;
			counts.check(ledger, key, state, "internal status " + local.status());
		}
		return counts.result();
	}

	/** Keys on which the replicas (internal API, 1/1 each) do not all hold the same. */
	public static List<String> divergent(Ledger ledger, KvClient client, List<String> baseUrls) {
		List<String> divergent = new ArrayList<>();
		for (String key : ledger.keys()) {
			String first = null;
			for (int i = 0; i < baseUrls.size(); i++) {
				KvClient.Local local = client.local(baseUrls.get(i), key);
				String state = local.status() + ":"
						+ (local.tombstone() || local.status() == 404 ? "gone" : local.value());
				if (i == 0) {
					first = state;
				}
				else if (!state.equals(first)) {
					divergent.add(key + " " + first + " vs " + state + " on " + baseUrls.get(i));
					break;
				}
			}
		}
		return divergent;
	}

	private static void sleepQuietly(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static final class Counts {

		int checked;

		int lost;

		int resurrected;

		int impossible;

		int unreadable;

		int retried;

		final List<String> examples = new ArrayList<>();

		void check(Ledger ledger, String key, String state, String detail) {
			this.checked++;
			Set<String> possible = ledger.possible(key);
			if (state == null) {
				this.unreadable++;
				example(key + ": " + detail);
				return;
			}
			if (possible.contains(state)) {
				return;
			}
			if (possible.size() == 1) {
				if (possible.contains(Ledger.GONE)) {
					this.resurrected++;
					example(key + ": deleted (202) but reads " + state);
				}
				else {
					this.lost++;
					example(key + ": acknowledged " + possible + " but reads " + printable(state));
				}
			}
			else {
				this.impossible++;
				example(key + ": reads " + printable(state) + ", possible " + possible);
			}
		}

		private void example(String text) {
			if (this.examples.size() < 10) {
				// values may be kilobytes long
				this.examples.add((text.length() > 300) ? text.substring(0, 300) + "..." : text);
			}
		}

		private static String printable(String state) {
			return state.equals(Ledger.GONE) ? "404/gone" : state;
		}

		LedgerCheck result() {
			return new LedgerCheck(this.checked, this.lost, this.resurrected, this.impossible, this.unreadable,
					this.retried, List.copyOf(this.examples));
		}

	}

}
