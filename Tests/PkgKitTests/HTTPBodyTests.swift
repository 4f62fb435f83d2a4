import Foundation
import PkgKit
import PkgKitSupport
import Testing

/// The body every transport hands out: dropped before its end, it ends its transfer.
@Suite struct HTTPBodyTests {
    @Test func aBodyIsCancelledOnceWhenItsLastCopyAndIteratorGo() {
        let cancels = LockedValue(0)
        do {
            let body = HTTPBody(next: { nil }, cancel: { cancels.withLock { $0 += 1 } })
            let copy = body
            let chunks = copy.makeAsyncIterator()
            withExtendedLifetime(body) { #expect(cancels.current == 0, "a body still held is not cancelled") }
            withExtendedLifetime(chunks) { #expect(cancels.current == 0, "an iterator still reading keeps the body") }
        }
        #expect(cancels.current == 1, "a body dropped unread is cancelled, once")
    }
}
