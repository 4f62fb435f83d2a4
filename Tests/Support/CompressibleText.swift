import Foundation

/// `count` bytes of text made of words drawn by a seeded generator: it compresses about as
/// prose does (three to four times) and, unlike a repeated pattern, no stretch of it repeats, so
/// content-defined chunk boundaries fall as they would in real files.
public func compressibleText(_ count: Int, seed: UInt64) -> Data {
    var random = SeededRandom(seed: seed)
    let words = (0..<512).map { index -> [UInt8] in
        var generator = SeededRandom(seed: UInt64(index) &* 7919)
        let length = Int.random(in: 2...9, using: &generator)
        return (0..<length).map { _ in UInt8.random(in: 0x61...0x7A, using: &generator) }
    }
    var data = Data(capacity: count + 16)
    while data.count < count {
        data.append(contentsOf: words[Int(random.next() % 512)])
        data.append(random.next() % 12 == 0 ? 0x0A : 0x20)
    }
    return data.prefix(count)
}
