package io.quorumkv.service.nemesis;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.quorumkv.service.support.KvClient;
import io.quorumkv.storage.contract.Seeds;
import org.jspecify.annotations.Nullable;

/**
 * One nemesis run: start the nodes, let the clients work while the nemesis injects its
 * faults, heal everything, wait for hints, read every key from every replica, check. The
 * seed it prints drives the clients' choices and the faults drawn; a failing run's folder
 * (history.log, each node's log) is kept.
 */
final class NemesisRun {

	/**
	 * @param name the scenario, in folder names and output
	 * @param seed drives every random choice
	 * @param options the nodes
	 * @param threads client threads
	 * @param keysPerThread keys each thread owns
	 * @param mix what the clients do
	 * @param duration how long the clients work (the nemesis stops with them)
	 * @param plan the faults, given the seeded random and the nodes
	 * @param holdMillis how long a fault lasts unless it says otherwise
	 * @param quietMillis the gap between two faults
	 * @param settleMillis the longest wait after healing, before the final reads, for
	 * every member to have delivered its hints (every 200 ms with a backoff of at most 1
	 * s); the reads begin when the bound is reached even so, as they always did
	 */
	record Scenario(String name, long seed, NemesisNodes.Options options, int threads, int keysPerThread,
			Clients.Mix mix, Duration duration, Function<Random, Supplier<@Nullable Fault>> plan, long holdMillis,
			long quietMillis, long settleMillis) {

	}

	/**
	 * @param report what the checker found
	 * @param injected faults injected, by kind
	 * @param network which partition mechanism ran
	 * @param nemesisFailure why the nemesis stopped early, if it did
	 */
	record Outcome(CheckReport report, Map<String, Integer> injected, String network,
			@Nullable Throwable nemesisFailure) {

		int faults() {
			return this.injected.values().stream().mapToInt(Integer::intValue).sum();
		}

	}

	private NemesisRun() {
	}

	/**
	 * The seed of a scenario: {@code -Dquorumkv.nemesis.seed}, else {@link Seeds#next()}
	 * ({@code -Dquorumkv.test.seed} or a new one).
	 */
	static long seed() {
		String given = System.getProperty("quorumkv.nemesis.seed");
		return (given != null && !given.isBlank()) ? Long.parseLong(given.strip()) : Seeds.next();
	}

	/** Starts the nodes, runs the scenario on them, stops them. */
	static Outcome execute(Scenario scenario, Path root) {
		System.out.println("Nemesis " + scenario.name() + ": seed " + scenario.seed()
				+ " (rerun with -Dquorumkv.nemesis.seed=" + scenario.seed() + "), folder " + root);
		Random random = new Random(scenario.seed());
		try (NemesisNodes nodes = new NemesisNodes(root, scenario.options(), random)) {
			nodes.startAll();
			warmUp(nodes);
			return phase(scenario, nodes, root, random);
		}
	}

	/**
	 * Runs the scenario on running nodes (its keys are its own): clients and nemesis
	 * until the duration is over or the nemesis's plan is done, then heals, waits
	 * {@code settleMillis} for hints, reads every key back and checks.
	 */
	static Outcome phase(Scenario scenario, NemesisNodes nodes, Path root, Random random) {
		return phase(scenario, nodes, root, random, () -> {
		});
	}

	/**
	 * The same, with {@code afterHealing} run once everything is healed, before the wait
	 * for hints and the final reads (a membership scenario waits there for the ring to
	 * settle, so that the final reads go to the members of the final ring).
	 */
	static Outcome phase(Scenario scenario, NemesisNodes nodes, Path root, Random random, Runnable afterHealing) {
		try (History history = new History(root.resolve(scenario.name() + "-history.log"));
				History finals = new History(root.resolve(scenario.name() + "-final-reads.log"))) {
			List<String> urls = new ArrayList<>();
			for (int node = 0; node < nodes.size(); node++) {
				urls.add(nodes.url(node));
			}
			Clients clients = new Clients(history, urls, nodes::members, prefix(scenario), scenario.threads(),
					scenario.keysPerThread(), random.nextLong(), scenario.mix());
			Nemesis nemesis = new Nemesis(nodes, history, scenario.plan().apply(random), scenario.holdMillis(),
					scenario.quietMillis());
			long started = System.nanoTime();
			clients.start(scenario.duration().plus(Duration.ofMinutes(5)));
			nemesis.start();
			long deadline = started + scenario.duration().toNanos();
			while (System.nanoTime() < deadline && !nemesis.done()) {
				Pause.millis(200);
			}
			nemesis.stop();
			clients.stop();
			System.out.println("Nemesis " + scenario.name() + ": clients stopped after "
					+ (System.nanoTime() - started) / 1_000_000 + " ms; healing");
			healAll(nodes);
			afterHealing.run();
			awaitHintsDelivered(nodes, scenario.settleMillis());
			List<Op> reads = clients.finalReads(finals);
			long slack = scenario.mix().clockSlackMillis();
			CheckReport report = Checker.check(history.ops(), reads, history.windows(),
					history.timing((slack < 0) ? -1 : slack * 1_000));
			Outcome outcome = new Outcome(report, nemesis.injected(), nodes.network().describe(), nemesis.failure());
			System.out.println("Nemesis " + scenario.name() + " (seed " + scenario.seed() + "): faults "
					+ outcome.injected() + " over " + outcome.network() + "\n" + report.summary());
			return outcome;
		}
	}

	/**
	 * Waits until no running member holds a hint for a peer (the sum of its
	 * {@code quorumkv.hints.pending} gauges is 0; absent before its first hint), at most
	 * {@code limitMillis}: hints to a node retired by a decommission may stay.
	 */
	static void awaitHintsDelivered(NemesisNodes nodes, long limitMillis) {
		KvClient client = new KvClient(Duration.ofSeconds(2));
		Pattern value = Pattern.compile("\"value\":([0-9.E+-]+)");
		long start = System.nanoTime();
		long deadline = start + limitMillis * 1_000_000;
		String pending = "";
		do {
			StringBuilder held = new StringBuilder();
			for (int node : nodes.members()) {
				if (!nodes.running(node)) {
					continue;
				}
				KvClient.Answer answer = client.getPath(nodes.url(node), "/actuator/metrics/quorumkv.hints.pending");
				Matcher matcher = value.matcher(answer.body());
				if (answer.status() == 404
						|| (answer.status() == 200 && matcher.find() && Double.parseDouble(matcher.group(1)) == 0)) {
					continue;
				}
				held.append(" n").append(node).append(": ").append(answer.status()).append(' ').append(answer.body());
			}
			pending = held.toString();
			if (pending.isEmpty()) {
				break;
			}
			Pause.millis(200);
		}
		while (System.nanoTime() < deadline);
		System.out.println("Nemesis: " + (pending.isEmpty() ? "no hint pending" : "hints still pending" + pending) + " "
				+ (System.nanoTime() - start) / 1_000_000 + " ms after healing");
	}

	/** The keys a scenario's clients write. */
	static List<String> keys(Scenario scenario) {
		List<String> keys = new ArrayList<>();
		try (History none = new History(null)) {
			keys.addAll(new Clients(none, List.of(), prefix(scenario), scenario.threads(), scenario.keysPerThread(), 0,
					scenario.mix())
				.keys());
		}
		return keys;
	}

	private static String prefix(Scenario scenario) {
		return scenario.name() + Long.toHexString(scenario.seed() & 0xffff);
	}

	/**
	 * Eight seconds of unchecked traffic through every node: a node fresh from start (C1
	 * only, on a loaded two-core machine) answers in hundreds of milliseconds at first,
	 * which would starve a short scenario of operations.
	 */
	static void warmUp(NemesisNodes nodes) {
		List<String> urls = new ArrayList<>();
		for (int node = 0; node < nodes.size(); node++) {
			urls.add(nodes.url(node));
		}
		try (History history = new History(null)) {
			Clients clients = new Clients(history, urls, nodes::members, "warm-up", 4, 8, 0, Clients.Mix.standard());
			clients.start(Duration.ofSeconds(8));
			Pause.millis(8_000);
			clients.stop();
			System.out.println("Nemesis warm-up: " + history.ops().size() + " operations");
		}
	}

	/**
	 * Every node running (but those never started and those decommissioned), resumed,
	 * reachable, with its clock right.
	 */
	static void healAll(NemesisNodes nodes) {
		nodes.network().heal();
		for (int node = 0; node < nodes.size(); node++) {
			nodes.setClockOffset(node, 0);
			if (nodes.running(node)) {
				nodes.resume(node);
			}
			else if (nodes.wanted(node)) {
				nodes.start(node);
			}
		}
		for (int node = 0; node < nodes.size(); node++) {
			if (nodes.wanted(node)) {
				nodes.awaitReady(node, Duration.ofSeconds(120));
			}
		}
	}

}
