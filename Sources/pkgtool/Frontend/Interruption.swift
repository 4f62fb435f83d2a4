import ArgumentParser
import Dispatch
import Foundation
import PkgKit

/// SIGINT and SIGTERM as a request to stop: the first one sets `cancellation`, and the work in
/// progress removes what it started (a staging folder) before the command exits with 128 + the
/// signal (130, 143). Work that does not stop within `grace` seconds (blocked opening a FIFO, a
/// long flush), or a second signal, ends the process at once; the next run cleans up.
enum Interruption {
    /// The flag the library's long work checks.
    static let cancellation = Cancellation()
    /// How long work may take to stop after the first signal: within it, a sync or an extract
    /// ends on its own (SPEC section 7 gives it 2 seconds in every state).
    static let grace: Double = 1.5
    // Only read or written under `lock`.
    nonisolated(unsafe) private static var received: Int32 = 0
    private static let lock = NSLock()
    // Kept alive for the life of the process (releasing a source stops it); appended only by
    // `install`, which runs once on the main thread before any source fires.
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// Starts listening. Call once, before long work.
    static func install() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let first = lock.withLock { () -> Bool in
                    defer { if received == 0 { received = number } }
                    return received == 0
                }
                guard first else { _exit(128 + number) }
                cancellation.cancel()
                DispatchQueue.global().asyncAfter(deadline: .now() + grace) {
                    Console.err("pkgtool: interrupted")
                    _exit(128 + number)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The exit status for the signal that stopped the work.
    static var exitCode: ExitCode {
        ExitCode(128 + lock.withLock { received == 0 ? SIGINT : received })
    }
}
