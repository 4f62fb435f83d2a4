import Dispatch
import Foundation

/// Runs `work` on items 0..<count with up to `jobs` threads, and hands the results to `consume`
/// strictly in index order on the calling thread. At most `window` results wait at once, which
/// bounds memory whatever the number of items.
enum OrderedWorkPool {
    static func run<Result>(count: Int, jobs: Int, window: Int,
                            work: @escaping (Int) throws -> Result,
                            consume: (Int, Result) throws -> Void) throws {
        guard count > 0 else { return }
        if jobs <= 1 {
            for index in 0..<count { try consume(index, try work(index)) }
            return
        }
        let condition = NSCondition()
        var results: [Int: Swift.Result<Result, Error>] = [:]
        var next = 0
        var cancelled = false
        var consumed = 0
        let group = DispatchGroup()
        for _ in 0..<jobs {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while true {
                    condition.lock()
                    // Wait for room in the window so a slow early item cannot let later ones pile up.
                    while !cancelled && next < count && next - consumed >= window { condition.wait() }
                    if cancelled || next >= count { condition.unlock(); return }
                    let index = next
                    next += 1
                    condition.unlock()
                    let outcome = Swift.Result { try work(index) }
                    condition.lock()
                    results[index] = outcome
                    condition.broadcast()
                    condition.unlock()
                }
            }
        }
        defer {
            condition.lock()
            cancelled = true
            condition.broadcast()
            condition.unlock()
            group.wait()
        }
        for index in 0..<count {
            condition.lock()
            while results[index] == nil { condition.wait() }
            let outcome = results.removeValue(forKey: index)!
            consumed = index + 1
            condition.broadcast()
            condition.unlock()
            try consume(index, try outcome.get())
        }
    }
}
