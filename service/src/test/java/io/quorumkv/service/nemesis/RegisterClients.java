package io.quorumkv.service.nemesis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.IntUnaryOperator;

import io.quorumkv.service.nemesis.RegisterModel.Condition;
import io.quorumkv.service.nemesis.RegisterModel.DeleteIfVersion;
import io.quorumkv.service.nemesis.RegisterModel.Input;
import io.quorumkv.service.nemesis.RegisterModel.Observed;
import io.quorumkv.service.nemesis.RegisterModel.Output;
import io.quorumkv.service.nemesis.RegisterModel.PutIfAbsent;
import io.quorumkv.service.nemesis.RegisterModel.PutIfVersion;
import io.quorumkv.service.nemesis.RegisterModel.Read;
import io.quorumkv.service.support.EntityCluster;
import org.jspecify.annotations.Nullable;

/**
 * Clients of conditional writes and serial reads on a few keys, each call recorded for
 * {@link LinearizabilityChecker}: a random mix of {@code PUT If-Match} (on the version
 * the client last learnt), {@code PUT If-None-Match: *}, {@code DELETE If-Match} and
 * {@code GET consistency=serial}. Every call and answer is timed on one monotonic clock;
 * 201/202 is a condition held (with the version written), 412 one that failed (with the
 * current version), a serial read the value and version it saw; any other answer of a
 * write (504, 503, another 5xx) or none after the request was sent is an outcome unknown,
 * and a serial read without a 200 or 404 constrains nothing. A request whose connection
 * was never made (refused, connect timeout: the node is down or cut off) was never sent
 * and is left out. Every answer is counted by status ({@link #answers}).
 */
final class RegisterClients {

	/** The answers counted when a request was sent but no answer came, or never sent. */
	static final String NO_ANSWER = "no answer";

	static final String NOT_SENT = "not sent";

	private final EntityCluster cluster;

	private final List<String> keys;

	private final AtomicLong ids = new AtomicLong();

	private final Map<String, Integer> answers = new ConcurrentHashMap<>();

	RegisterClients(EntityCluster cluster, List<String> keys) {
		this.cluster = cluster;
		this.keys = List.copyOf(keys);
	}

	/** Answers so far by status ({@link #NO_ANSWER}, {@link #NOT_SENT}). */
	Map<String, Integer> answers() {
		return new TreeMap<>(this.answers);
	}

	/**
	 * Runs client {@code client} (values {@code c<client>-<n>}) for at most {@code max}
	 * operations while {@code going}, the {@code n}th sent to node {@code nodeOf(n)},
	 * pausing {@code thinkMillis} between two; its operations.
	 */
	List<LinearizabilityOp> run(int client, Random random, IntUnaryOperator nodeOf, BooleanSupplier going, int max,
			long thinkMillis) {
		List<LinearizabilityOp> ops = new ArrayList<>();
		Map<String, Long> known = new TreeMap<>();
		for (int n = 0; n < max && going.getAsBoolean() && !Thread.currentThread().isInterrupted(); n++) {
			int node = nodeOf.applyAsInt(n);
			String key = this.keys.get(random.nextInt(this.keys.size()));
			long version = known.getOrDefault(key, RegisterModel.ABSENT);
			String value = "c" + client + "-" + n;
			int choice = random.nextInt(10);
			long call = System.nanoTime();
			Call sent;
			if (choice < 3) {
				sent = send(node, "GET", key + "&consistency=serial", null, new Read());
			}
			else if (version == RegisterModel.ABSENT || choice < 5) {
				sent = send(node, "PUT", key, value, new PutIfAbsent(value, RegisterModel.UNKNOWN), "If-None-Match",
						"*");
			}
			else if (choice < 9) {
				sent = send(node, "PUT", key, value, new PutIfVersion(value, version, RegisterModel.UNKNOWN),
						"If-Match", tag(version));
			}
			else {
				sent = send(node, "DELETE", key, null, new DeleteIfVersion(version), "If-Match", tag(version));
			}
			long ret = System.nanoTime();
			if (sent != null) {
				ops.add(new LinearizabilityOp(this.ids.getAndIncrement(), client, key, sent.input(), sent.output(),
						call, ret));
				known.put(key, sent.learnt(version));
			}
			if (thinkMillis > 0) {
				Pause.millis(thinkMillis);
			}
		}
		return ops;
	}

	/** What one call asked (with the version it wrote, once known) and answered. */
	private record Call(Input input, @Nullable Output output, long learnt) {

		long learnt(long before) {
			return (this.learnt == RegisterModel.UNKNOWN) ? before : this.learnt;
		}

	}

	/** The call, or null when it was never sent. */
	private @Nullable Call send(int node, String method, String key, @Nullable String body, Input input,
			String... headers) {
		HttpResponse<String> response;
		try {
			response = this.cluster.send(node, method, "id=" + key, body, headers);
		}
		catch (ConnectException | HttpConnectTimeoutException ex) {
			this.answers.merge(NOT_SENT, 1, Integer::sum);
			return null;
		}
		catch (IOException ex) {
			this.answers.merge(NO_ANSWER, 1, Integer::sum);
			return new Call(input, null, RegisterModel.UNKNOWN);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return new Call(input, null, RegisterModel.UNKNOWN);
		}
		int status = response.statusCode();
		this.answers.merge(String.valueOf(status), 1, Integer::sum);
		long version = version(EntityCluster.etag(response));
		if (input instanceof Read) {
			return switch (status) {
				case 200 -> new Call(input, new Observed(response.body(), version), version);
				case 404 -> new Call(input, new Observed(null, RegisterModel.ABSENT), RegisterModel.ABSENT);
				default -> new Call(input, null, RegisterModel.UNKNOWN);
			};
		}
		return switch (status) {
			case 201, 202 -> new Call(written(input, version), new Condition(true, RegisterModel.UNKNOWN),
					(input instanceof DeleteIfVersion) ? RegisterModel.ABSENT : version);
			case 412 -> new Call(input, new Condition(false, version), version);
			// a 504 says "may have been applied" or "not applied"; both are within
			// unknown, and so is any other failure once the request was sent
			default -> new Call(input, null, RegisterModel.UNKNOWN);
		};
	}

	/**
	 * {@code input} with the version its write created ({@link RegisterModel#ABSENT} for
	 * a delete).
	 */
	private static Input written(Input input, long version) {
		return switch (input) {
			case PutIfVersion put -> new PutIfVersion(put.value(), put.expected(), version);
			case PutIfAbsent put -> new PutIfAbsent(put.value(), version);
			default -> input;
		};
	}

	/** The version an {@code ETag} names, {@link RegisterModel#ABSENT} for none. */
	private static long version(@Nullable String etag) {
		if (etag == null) {
			return RegisterModel.ABSENT;
		}
		long version = Long.parseUnsignedLong(etag.substring(1, etag.length() - 1), 16);
		assertThat(version).as("ETag %s", etag).isGreaterThan(RegisterModel.ABSENT);
		return version;
	}

	private static String tag(long version) {
		return "\"" + Long.toHexString(version) + "\"";
	}

	/**
	 * Checks {@code history}: linearizable, else an {@link AssertionError} that explains
	 * the counter-example (or the spent budget), with the key's operations in call order
	 * written to {@code folder}.
	 * @param context what to say first (the seed)
	 */
	static LinearizabilityResult.Linearizable assertLinearizable(List<LinearizabilityOp> history, String context,
			Path folder) {
		LinearizabilityResult result = new LinearizabilityChecker(LinearizabilityChecker.Budget.DEFAULT).check(history);
		return switch (result) {
			case LinearizabilityResult.Linearizable ok -> ok;
			case LinearizabilityResult.Violation violation -> throw new AssertionError(context + ": "
					+ violation.explain() + "\nthe key's history: " + written(history, violation.key(), folder));
			case LinearizabilityResult.Unknown unknown ->
				throw new AssertionError(context + ": the checker's budget ran out on key " + unknown.key() + " ("
						+ unknown.reason() + "): no verdict; make the history smaller");
		};
	}

	/** Writes {@code key}'s operations, in call order, to a file in {@code folder}. */
	private static Path written(List<LinearizabilityOp> history, String key, Path folder) {
		Path file = folder.resolve("conditional-linearizability-" + key + ".txt").toAbsolutePath();
		try {
			Files.createDirectories(folder);
			Files.write(file,
					history.stream()
						.filter((op) -> op.key().equals(key))
						.sorted(Comparator.comparingLong(LinearizabilityOp::call))
						.map(LinearizabilityOp::toString)
						.toList());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return file;
	}

}
