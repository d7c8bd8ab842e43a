package io.quorumkv.service.nemesis;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * Every invocation and completion of the clients' operations, with monotonic times, and
 * the fault windows of the nemesis. Each event is also appended as a line to a log file
 * (kept with a failing run's folder), so that a run can be read after the fact.
 */
final class History implements AutoCloseable {

	/** A fault's window: from its start to its end (both monotonic). */
	record Window(String fault, long start, long end) {

	}

	/**
	 * An operation under way: the invocation, completed by {@link History#complete}.
	 * {@code ttlSeconds}, {@code ifNoneMatch} and {@code page} (a page asked for, without
	 * records) are as in {@link Op}.
	 */
	record Invocation(long id, int client, Op.Kind kind, String key, @Nullable String value, int ack, int from,
			int node, long invoked, long ttlSeconds, @Nullable String ifNoneMatch, Op.@Nullable Page page) {

	}

	private final AtomicLong ids = new AtomicLong();

	private final List<Op> ops = new ArrayList<>();

	private final List<Window> windows = new ArrayList<>();

	private final @Nullable BufferedWriter log;

	/** Added to a monotonic time, the wall-clock time in nanoseconds. */
	private final long wallOffset;

	History(@Nullable Path logFile) {
		Instant now = Instant.now();
		this.wallOffset = now.getEpochSecond() * 1_000_000_000L + now.getNano() - System.nanoTime();
		try {
			this.log = (logFile != null) ? Files.newBufferedWriter(logFile, StandardCharsets.UTF_8) : null;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** How the times of this history compare with versions (nanoseconds). */
	Checker.Timing timing(long clockSlackMicros) {
		return new Checker.Timing(this.wallOffset, 1_000, clockSlackMicros, Checker.Timing.TTL_MARGIN_MICROS);
	}

	Invocation invoke(int client, Op.Kind kind, String key, @Nullable String value, int ack, int from, int node) {
		return invoke(client, kind, key, value, ack, from, node, 0, null, null);
	}

	Invocation invoke(int client, Op.Kind kind, String key, @Nullable String value, int ack, int from, int node,
			long ttlSeconds, @Nullable String ifNoneMatch, Op.@Nullable Page page) {
		Invocation invocation = new Invocation(this.ids.getAndIncrement(), client, kind, key, value, ack, from, node,
				System.nanoTime(), ttlSeconds, ifNoneMatch, page);
		write("invoke " + invocation.id() + " c" + client + " " + kind + " " + key + " "
				+ ((value != null) ? value : "-") + " " + ack + "/" + from + " n" + node
				+ ((ttlSeconds > 0) ? " ttl " + ttlSeconds : "")
				+ ((ifNoneMatch != null) ? " if-none-match " + ifNoneMatch : "") + ((page != null)
						? (page.after() ? " after" : " from") + " .. " + page.end() + " limit " + page.limit() : "")
				+ " t" + invocation.invoked());
		return invocation;
	}

	Op complete(Invocation invocation, int status, @Nullable String body) {
		return complete(invocation, status, body, null, List.of());
	}

	/**
	 * @param version the {@code ETag} answered, unquoted, if any
	 * @param records what a scan page answered
	 */
	Op complete(Invocation invocation, int status, @Nullable String body, @Nullable String version,
			List<Op.Record> records) {
		Op.Page page = invocation.page();
		Op op = new Op(invocation.id(), invocation.client(), invocation.kind(), invocation.key(),
				(invocation.kind() == Op.Kind.GET) ? ((status == 200) ? body : null) : invocation.value(),
				invocation.ack(), invocation.from(), invocation.node(), invocation.invoked(), System.nanoTime(), status,
				(invocation.kind() == Op.Kind.GET) ? version : null, invocation.ttlSeconds(), invocation.ifNoneMatch(),
				(page != null) ? new Op.Page(page.after(), page.end(), page.limit(), records) : null);
		add(op);
		String detail = (op.kind() == Op.Kind.GET && status == 200) ? " " + body
				: (op.kind() == Op.Kind.SCAN && status == 200)
						? " " + records.size() + " records" + recordsText(records)
						: (status >= 300 && status != 304 && body != null && !body.isBlank())
								? " \"" + oneLine(body) + "\"" : "";
		write("complete " + op.id() + " " + status + detail + ((op.version() != null) ? " v" + op.version() : "") + " t"
				+ op.completed());
		return op;
	}

	private static String recordsText(List<Op.Record> records) {
		StringBuilder text = new StringBuilder();
		for (Op.Record record : records) {
			text.append(' ')
				.append(record.key())
				.append('=')
				.append(record.value())
				.append(" v")
				.append(record.version());
		}
		return text.toString();
	}

	/** An error body on one line, cut short: why a request failed, for people. */
	private static String oneLine(String body) {
		String line = body.strip().replace('\n', ' ').replace('\r', ' ');
		return (line.length() > 160) ? line.substring(0, 160) + "..." : line;
	}

	/** Adds a completed operation as it is (the checker's tests build histories so). */
	synchronized void add(Op op) {
		this.ops.add(op);
	}

	synchronized void window(String fault, long start, long end) {
		this.windows.add(new Window(fault, start, end));
		write("fault " + fault + " t" + start + ".." + end);
	}

	synchronized void note(String text) {
		write("note " + text);
	}

	synchronized List<Op> ops() {
		return List.copyOf(this.ops);
	}

	synchronized List<Window> windows() {
		return List.copyOf(this.windows);
	}

	private synchronized void write(String line) {
		if (this.log == null) {
			return;
		}
		try {
			this.log.write(line);
			this.log.newLine();
		}
		catch (IOException ex) {
			// the log is a record for people; the in-memory history is what is checked
		}
	}

	@Override
	public synchronized void close() {
		if (this.log != null) {
			try {
				this.log.close();
			}
			catch (IOException ex) {
				// best effort
			}
		}
	}

}
