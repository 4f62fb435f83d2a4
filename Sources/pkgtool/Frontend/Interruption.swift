import ArgumentParser
import Dispatch
import Foundation
import PkgKit

/// How every command answers SIGINT and SIGTERM, in one place: the first signal asks the work to
/// stop (its `Cancellation` is set), the work removes what it started and throws
/// `OperationCancelled`, and the command says in one line what it left as it was
/// (`extract: interrupted; nothing was installed, …`) and exits with 128 + the signal (130, 143).
/// Work that does not stop within its grace (blocked opening a FIFO, a long flush), or a second
/// signal, ends the process at once, with the same line; what a kill leaves, the next run cleans.
///
/// A command wraps its work once:
///
/// ```swift
/// let report = try Interruption.run("extract", leaves: "nothing was installed") { cancellation in
///     try installer.install(package, options: InstallOptions(cancellation: cancellation))
/// }
/// ```
///
/// (`ReportingCommand` and `AsyncReportingCommand` do this for every command built on them.)
enum Interruption {
    /// How long work may take to stop after the first signal, unless the command says otherwise.
    static let defaultGrace: Double = 5

    /// Runs `body`, the work of `command`, with the flag that SIGINT and SIGTERM set. `leaves`
    /// says what an interrupted run leaves as it was ("nothing was written"); `grace` how long the
    /// work may take to stop. An `OperationCancelled` from `body` becomes the line and the exit
    /// status 130 or 143.
    static func run<T>(_ command: String, leaves: String, grace: Double = defaultGrace,
                       _ body: (Cancellation) throws -> T) throws -> T {
        listen(line: line(command, leaves), grace: grace)
        do {
            defer { settle() }
            return try body(cancellation)
        } catch is OperationCancelled {
            throw stopped()
        }
    }

    /// `run` for async work (sync): the same flag, line and exit statuses.
    static func run<T>(_ command: String, leaves: String, grace: Double = defaultGrace,
                       _ body: (Cancellation) async throws -> T) async throws -> T {
        listen(line: line(command, leaves), grace: grace)
        do {
            defer { settle() }
            return try await body(cancellation)
        } catch is OperationCancelled {
            throw stopped()
        }
    }

    /// The flag the library's long work checks.
    static let cancellation = Cancellation()
    /// What the signal handling and the work tell each other.
    private struct State {
        /// The first signal received, 0 before one.
        var received: Int32 = 0
        /// True once the line was said.
        var announced = false
        /// True once the work ended, one way or the other.
        var settled = false
        /// The line to say.
        var message = ""
        /// How long the work has to stop after the first signal.
        var graceSeconds = defaultGrace
    }
    private static let state = LockedValue(State())
    // Kept alive for the life of the process (releasing a source stops it); appended only by
    // `listen`, on the main thread, before any source fires.
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []
    /// Where signals are handled and the grace runs out: a queue of its own, which gets a thread
    /// even when every worker of the global queues is blocked (in the work itself: opening a FIFO
    /// no one writes, a long flush). On the global queue, a signal then waited for a worker that
    /// never came, and the command could not be stopped.
    private static let queue = DispatchQueue(label: "pkgtool.interruption")

    private static func line(_ command: String, _ leaves: String) -> String { "\(command): interrupted; \(leaves)" }

    /// Starts listening (once per process) and sets what the line says.
    private static func listen(line: String, grace: Double) {
        state.withLock {
            $0.message = line
            $0.graceSeconds = grace
        }
        guard sources.isEmpty else { return }
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { signalled(number) }
            // A source is armed some time after `resume`, on libdispatch's own thread; until then
            // the signal is ignored. The work starts only once both are armed, or a signal sent
            // while it runs (a busy machine delays the arming) would be lost and the work never stop.
            let armed = DispatchSemaphore(value: 0)
            source.setRegistrationHandler { armed.signal() }
            source.resume()
            armed.wait()
            sources.append(source)
        }
    }

    private static func signalled(_ number: Int32) {
        let (first, grace) = state.withLock { state -> (Bool, Double) in
            defer { if state.received == 0 { state.received = number } }
            return (state.received == 0, state.graceSeconds)
        }
        guard first else { endNow() }
        cancellation.cancel()
        queue.asyncAfter(deadline: .now() + grace) {
            // Work that ended in the meantime says its own outcome (what it wrote is written).
            if !state.current.settled { endNow() }
        }
    }

    /// The work has ended, one way or the other: the command says the rest itself.
    private static func settle() {
        state.withLock { $0.settled = true }
    }

    /// Ends the process with the first signal's status, saying the line unless the work has
    /// ended otherwise (then what it did is done, and the line would not be true).
    private static func endNow() -> Never {
        if !state.current.settled { announce() }
        _exit(status.code)
    }

    /// Says the line, unless it was said already.
    private static func announce() {
        let text = state.withLock { state -> String? in
            defer { state.announced = true }
            return state.announced ? nil : state.message
        }
        if let text { Console.err(text) }
    }

    /// The status for the signal that stopped the work.
    private static var status: ExitStatus {
        .interrupted(by: state.withLock { $0.received == 0 ? SIGINT : $0.received })
    }

    /// The work stopped as asked: the line, and the exit status to end with.
    private static func stopped() -> ExitCode {
        announce()
        return status.exitCode
    }
}
