package io.quorumkv.bench;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

import javax.management.ObjectName;

import io.quorumkv.storage.lsm.LsmOptions;
import io.quorumkv.storage.lsm.LsmStorage;

/**
 * The live heap of an open LSM store: opens a folder (filled by {@link LsmLoader}) with
 * the defaults, gets {@code GETS} random keys of the loader's key space, then prints the
 * live class histogram's total (a full collection first, as
 * {@code jcmd GC.class_histogram} does) and its largest classes, with the store still
 * open.
 *
 * <pre>{@code
 * java -Xmx1g -cp jmh/target/benchmarks.jar io.quorumkv.bench.LsmHeapProbe DIR KEYS [GETS]
 * }</pre>
 */
public final class LsmHeapProbe {

	private LsmHeapProbe() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 2) {
			System.err.println("usage: LsmHeapProbe DIR KEYS [GETS]");
			System.exit(2);
		}
		Path dir = Path.of(args[0]);
		long keys = Long.parseLong(args[1]);
		int gets = (args.length > 2) ? Integer.parseInt(args[2]) : 100_000;
		try (LsmStorage storage = LsmStorage.open(LsmOptions.defaults(dir))) {
			SplittableRandom random = new SplittableRandom(42);
			int found = 0;
			for (int i = 0; i < gets; i++) {
				byte[] key = String.format("k%010d", random.nextLong(keys)).getBytes(StandardCharsets.UTF_8);
				found += (storage.get(key).block(Duration.ofSeconds(10)) != null) ? 1 : 0;
			}
			Map<String, Long> gauges = storage.stats().gauges();
			String histogram = (String) ManagementFactory.getPlatformMBeanServer()
				.invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
						new Object[] { new String[0] }, new String[] { String[].class.getName() });
			String[] lines = histogram.split("\n");
			System.out.printf(Locale.ROOT, "probe: %,d of %,d gets found, %,d tables, %,d table bytes%n", found, gets,
					gauges.get("tables"), gauges.get("disk.bytes"));
			for (int i = 0; i < Math.min(8, lines.length); i++) {
				System.out.println(lines[i]);
			}
			System.out.println(lines[lines.length - 1]);
		}
	}

}
