import Foundation
import PkgKit

/// A progress bar on stderr: bytes done of total, rate and time left. It appears only when
/// stderr is a terminal and the work has taken more than a second, redraws at most ten times a
/// second, and is never shown with `--json` or `--quiet`.
final class ProgressBar: Sendable {
    private let enabled: Bool
    private let now: @Sendable () -> Date
    private let draw: @Sendable (String) -> Void
    private let start: Date
    /// When the bar was last drawn, and whether it is on the screen now.
    private let drawing = LockedValue((last: Date.distantPast, shown: false))

    /// `terminal`, `now` and `draw` are stderr's, the wall clock and stderr unless a test gives others.
    init(enabled: Bool, terminal: Bool = isatty(2) == 1, now: @escaping @Sendable () -> Date = Date.init,
         draw: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) {
        self.enabled = enabled && terminal
        self.now = now
        self.draw = draw
        start = now()
    }

    /// Reports `done` of `total` bytes, of the work `label` names (a product), if given.
    func update(_ done: Int64, of total: Int64, label: String? = nil) {
        guard enabled else { return }
        // Drawn under the lock, so that two threads' lines never interleave.
        drawing.withLock { drawing in
            let moment = now()
            let elapsed = moment.timeIntervalSince(start)
            guard elapsed > 1, moment.timeIntervalSince(drawing.last) >= 0.1 else { return }
            drawing = (moment, true)
            let rate = Double(done) / max(elapsed, 0.001)
            let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
            let left = rate > 0 && total > done ? Double(total - done) / rate : 0
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let line = String(format: "\r%@[%@] %3.0f%% %@/%@ %@/s %@ left ", label.map { $0 + " " } ?? "", bar, fraction * 100,
                              Self.bytes(done), Self.bytes(total), Self.bytes(Int64(rate)), Self.duration(left))
            draw(line)
        }
    }

    /// Clears the bar's line, if one was drawn (once: calling it again does nothing).
    func finish() {
        guard enabled, drawing.withLock({ drawing -> Bool in defer { drawing.shown = false }; return drawing.shown }) else { return }
        draw("\r" + String(repeating: " ", count: 79) + "\r")
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000 && unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 60 ? "\(whole / 60)m\(whole % 60)s" : "\(whole)s"
    }
}
