import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A latency trace beside a load: one request every INTERVAL_MS (GETs and PUTs in turn, of
 * random keys among KEYS, at REPLICAS, through the TARGETS in turn) for SECONDS seconds,
 * each printed when it ends as one tab-separated line: the time it was sent (ms since the
 * epoch), its latency in ms, the target, the method, the status (0 when it failed, with the
 * error after it) and how late it was sent (ms after its due time: the probe's own delay,
 * when the machine did not give it a core in time). The latency is counted from the due
 * time, so a late send counts, as wrk2 counts it. The requests are sent at their times
 * whatever the earlier ones do (at most 1,000 in flight), so a stall shows as every request
 * due during it answering late; wrk2 gives only the distribution, this gives the moment.
 * Run with the JDK (a source file):
 *
 * <pre>
 * java scripts/lib/LatencyProbe.java TARGETS KEYS REPLICAS SECONDS INTERVAL_MS &gt; trace.tsv
 * </pre>
 *
 * TARGETS is a comma-separated list of base URLs; keys are named as the wrk2 scripts name
 * them (k and ten digits).
 */
public final class LatencyProbe {

	private LatencyProbe() {
	}

	public static void main(String[] args) throws InterruptedException {
		if (args.length != 5) {
			System.err.println("usage: LatencyProbe TARGETS KEYS REPLICAS SECONDS INTERVAL_MS");
			System.exit(2);
		}
		String[] targets = args[0].split(",");
		long keys = Long.parseLong(args[1]);
		String replicas = args[2];
		long seconds = Long.parseLong(args[3]);
		long interval = Long.parseLong(args[4]);
		byte[] value = new byte[100];
		ThreadLocalRandom.current().nextBytes(value);
		HttpClient client = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.build();
		PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true);
		Runtime.getRuntime().addShutdownHook(new Thread(out::flush));
		Semaphore inFlight = new Semaphore(1000);
		long start = System.nanoTime();
		long count = seconds * 1000 / interval;
		for (long i = 0; i < count; i++) {
			long due = start + i * interval * 1_000_000;
			long wait = due - System.nanoTime();
			if (wait > 0) {
				Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
			}
			String target = targets[(int) (i % targets.length)];
			String key = "k" + String.format("%010d", ThreadLocalRandom.current().nextLong(keys));
			URI uri = URI.create(target + "/v0/entity?id=" + key + "&replicas=" + replicas);
			boolean put = (i % 2) == 1;
			HttpRequest request = HttpRequest.newBuilder(uri)
				.timeout(Duration.ofSeconds(30))
				.method(put ? "PUT" : "GET",
						put ? HttpRequest.BodyPublishers.ofByteArray(value) : HttpRequest.BodyPublishers.noBody())
				.build();
			if (!inFlight.tryAcquire()) {
				synchronized (out) {
					out.println(System.currentTimeMillis() + "\t-1\t" + target + "\t" + request.method()
							+ "\t0\tskipped\t0");
				}
				continue;
			}
			long sentMillis = System.currentTimeMillis();
			double late = Math.max(0, System.nanoTime() - due) / 1e6;
			client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, error) -> {
				inFlight.release();
				double ms = (System.nanoTime() - due) / 1e6;
				String status = (error != null) ? "0\t" + error.getClass().getSimpleName()
						: Integer.toString(response.statusCode()) + "\t";
				synchronized (out) {
					out.printf("%d\t%.2f\t%s\t%s\t%s\t%.2f%n", sentMillis, ms, target, request.method(), status,
							late);
				}
			});
		}
		if (!inFlight.tryAcquire(1000, 35, TimeUnit.SECONDS)) {
			System.err.println("LatencyProbe: requests still in flight after 35 s");
		}
		out.flush();
	}

}
