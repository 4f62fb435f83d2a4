import Foundation
import Testing
import TestSupport
@testable import PkgKit
@testable import PkgKitFormat

/// The TOC inflater works on a thread of its own, a few chunks ahead of the parser: it must hand
/// over every byte in order however many times its ring goes round, refuse a TOC that inflates
/// past its limit or is cut short, and stop when the parser leaves early.
@Suite struct XarTOCInflaterTests {
    /// XML-like text several times the ring's size, different in every line.
    static let xml: [UInt8] = {
        var text = ""
        for index in 0..<60_000 { text += "<file id=\"\(index)\"><name>entry_\(index * 7919 % 100_003).txt</name></file>\n" }
        return Array(text.utf8)
    }()

    /// A file holding a 28-byte header (what the inflater skips) and then `tail`.
    static func write(_ tail: [UInt8], _ dir: Scratch, _ name: String = "toc.xar") throws -> PackageFile {
        let path = dir.path(name)
        try Data(Array("xar!".utf8) + [UInt8](repeating: 0, count: 24) + tail).write(to: URL(fileURLWithPath: path))
        return try PackageFile(path: path)
    }

    /// An inflater over `file`, started.
    static func started(_ file: PackageFile, maxBytes: Int64 = 512 << 20) -> XarTOCInflater {
        let inflater = XarTOCInflater(bytes: file, maxBytes: maxBytes)
        inflater.start()
        return inflater
    }

    /// Every chunk until the end (empty) or a failure.
    static func drain(_ inflater: XarTOCInflater) -> (bytes: [UInt8], failure: XarTOCError?) {
        var bytes: [UInt8] = []
        do {
            while true {
                let chunk = try inflater.next()
                #expect(chunk.count <= XarTOCInflater.chunkSize)
                if chunk.isEmpty { return (bytes, nil) }
                bytes += chunk
            }
        } catch {
            return (bytes, error)
        }
    }

    @Test func everyByteComesOutInOrderAcrossTheRing() throws {
        let dir = try Scratch()
        #expect(Self.xml.count > 4 * XarTOCInflater.depth * XarTOCInflater.chunkSize)
        let file = try Self.write(XarCrafter.zlib(Self.xml) + Array("heap bytes after the TOC".utf8), dir)
        let inflater = Self.started(file)
        let (bytes, failure) = Self.drain(inflater)
        inflater.stop()
        #expect(failure == nil)
        #expect(bytes == Self.xml)
    }

    @Test func aTableOfContentsPastTheLimitIsRefused() throws {
        let dir = try Scratch()
        let file = try Self.write(XarCrafter.zlib(Self.xml), dir)
        let limit = Int64(Self.xml.count / 3)
        let inflater = Self.started(file, maxBytes: limit)
        let (bytes, failure) = Self.drain(inflater)
        inflater.stop()
        #expect(failure == .limitPassed(.xmlBytes))
        #expect(Int64(bytes.count) <= limit)
    }

    @Test func aCutOrDamagedStreamIsRefused() throws {
        let dir = try Scratch()
        let compressed = XarCrafter.zlib(Self.xml)
        var damaged = compressed
        for index in stride(from: 200, to: 400, by: 1) { damaged[index] ^= 0x5A }
        for (name, tail, words) in [("cut", Array(compressed.prefix(compressed.count / 2)), "cut short"), ("damaged", damaged, "(zlib: "),
                                    ("not zlib", Array(Self.xml.prefix(5000)), "(zlib: incorrect header check)"), ("empty", [], "cut short")] {
            let inflater = Self.started(try Self.write(tail, dir, name))
            let (bytes, failure) = Self.drain(inflater)
            inflater.stop()
            guard case .malformed(let message)? = failure else {
                Issue.record("\(name): \(String(describing: failure))")
                continue
            }
            #expect(message.contains(words), "\(name): \(message)")
            if name == "cut" { #expect(bytes.count < Self.xml.count) }
        }
    }

    /// The parser gives up after the first chunk (a malformed TOC): stopping returns at once,
    /// wherever the inflating thread is (inflating, or blocked on a full ring). An inflater never
    /// started stops at once too.
    @Test(.timeLimit(.minutes(2)))
    func stoppingEarlyReturns() throws {
        let dir = try Scratch()
        let file = try Self.write(XarCrafter.zlib(Self.xml), dir)
        for _ in 0..<20 {
            let inflater = Self.started(file)
            let first = try inflater.next()
            #expect(Array(first) == Array(Self.xml.prefix(first.count)))
            inflater.stop()
        }
        XarTOCInflater(bytes: file, maxBytes: 512 << 20).stop()
    }
}
