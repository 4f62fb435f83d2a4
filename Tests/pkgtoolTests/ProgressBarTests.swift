import Foundation
import Synchronization
import Testing
@testable import pkgtool

/// The bar a terminal shows during long work: nothing in the first second, then the product it is
/// about (sync names it), bytes done of total, and a line cleared at the end.
@Suite struct ProgressBarTests {
    /// A clock the test moves, and the text the bar would have written to stderr.
    private final class Terminal: Sendable {
        let seconds = Mutex(0.0)
        let written = Mutex("")
        func bar(enabled: Bool = true, terminal: Bool = true) -> ProgressBar {
            ProgressBar(enabled: enabled, terminal: terminal,
                        now: { Date(timeIntervalSinceReferenceDate: self.seconds.withLock { $0 }) },
                        draw: { text in self.written.withLock { $0 += text } })
        }
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
        var text: String { written.withLock { $0 } }
    }

    @Test func aSyncBarNamesItsProductAfterTheFirstSecond() {
        let terminal = Terminal()
        let bar = terminal.bar()
        bar.update(1_000_000, of: 4_000_000, label: "com.example.book")
        #expect(terminal.text.isEmpty, "a bar for work that ends within a second only flickers")
        terminal.advance(2)
        bar.update(2_000_000, of: 4_000_000, label: "com.example.book")
        #expect(terminal.text.hasPrefix("\rcom.example.book [###############---------------]  50% 2.0 MB/4.0 MB 1.0 MB/s 2s left"),
                "\(terminal.text.debugDescription)")
        let firstLine = terminal.text
        terminal.advance(0.05)
        bar.update(3_000_000, of: 4_000_000, label: "com.example.book")
        #expect(terminal.text == firstLine, "redrawn sooner than a tenth of a second")
        bar.finish()
        #expect(terminal.text.hasSuffix("\r" + String(repeating: " ", count: 79) + "\r"), "the bar's line is not cleared")
        let cleared = terminal.text
        bar.finish()
        #expect(terminal.text == cleared, "cleared twice")
    }

    @Test(arguments: [(enabled: false, terminal: true), (enabled: true, terminal: false)])
    func noBarWithJSONQuietOrAPipe(enabled: Bool, terminal: Bool) {
        let screen = Terminal()
        let bar = screen.bar(enabled: enabled, terminal: terminal)
        screen.advance(5)
        bar.update(1, of: 2, label: "com.example.book")
        bar.finish()
        #expect(screen.text.isEmpty)
    }
}
