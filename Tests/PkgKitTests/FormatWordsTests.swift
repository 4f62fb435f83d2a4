import Foundation
import Testing
import TestSupport

/// Format, the lowest layer that knows packages, knows nothing of how a client keeps its content
/// up to date: no delta, sync, download, reused or installed file, in its names, its messages or
/// its comments. What a layer above needs from a reader it asks for in Format's own words (bytes
/// from a `PackageBytes`, which entries' data it wants) and words its advice itself.
/// Every layer's diagnostic codes and hints live below Format, in `Diagnostics/`, so no file of
/// Format is exempt.
@Suite struct FormatWordsTests {
    static let formatRoot = CommandRunner.packageRoot.appendingPathComponent("Sources/PkgKit/Format").path

    /// The words, matched whole, lowercased, after splitting names at their capitals.
    static let forbidden: Set<String> = [
        "delta", "deltas", "sync", "syncs", "syncing", "synced", "download", "downloads", "downloaded", "downloading",
        "reuse", "reuses", "reused", "reusing", "installed",
    ]

    @Test func formatNamesNoSyncingIdea() throws {
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: Self.formatRoot)
        var files = 0
        while let path = enumerator?.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            files += 1
            let text = try String(contentsOfFile: Self.formatRoot + "/" + path, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let words = Self.words(line).filter(Self.forbidden.contains)
                if !words.isEmpty { found.append("Format/\(path):\(number + 1): \(words.joined(separator: ", "))") }
            }
        }
        #expect(files > 50, "Format's sources were not found in \(Self.formatRoot)")
        #expect(found.isEmpty, "Format speaks of syncing:\n\(found.joined(separator: "\n"))")
    }

    /// The search finds the words in names, messages and comments, and only whole words.
    @Test func theSearchFindsWhatItLooksFor() {
        #expect(Self.words("final class DeltaReader: PackageReader {").contains("delta"))
        #expect(Self.words("entry.reused = file; let reusedEntries: Set<Int>").filter(Self.forbidden.contains) == ["reused", "reused"])
        #expect(Self.words(#"throw ReadError.unreadable(path: nil, "...: download it whole")"#).contains("download"))
        #expect(Self.words("/// the installed version's files").contains("installed"))
        #expect(Self.words("case installedNewer, syncFolder()").filter(Self.forbidden.contains) == ["installed", "sync"])
        #expect(Self.words("fsync(folder); syncfs; installer; deltoid; XarTOCReuser").filter(Self.forbidden.contains).isEmpty)
    }

    /// The lowercased words of `text`: runs of letters, a name split where a capital follows a
    /// small letter (`reusedEntries` is "reused" and "entries") or ends a run of capitals.
    static func words(_ text: some StringProtocol) -> [String] {
        var words: [String] = []
        var current = ""
        var previous: Character = " "
        let characters = Array(text)
        for (index, character) in characters.enumerated() {
            guard character.isLetter else {
                if !current.isEmpty { words.append(current.lowercased()) }
                current = ""
                previous = character
                continue
            }
            let next = index + 1 < characters.count ? characters[index + 1] : " "
            let startsWord = character.isUppercase && (previous.isLowercase || (previous.isUppercase && next.isLowercase))
            if startsWord, !current.isEmpty {
                words.append(current.lowercased())
                current = ""
            }
            current.append(character)
            previous = character
        }
        if !current.isEmpty { words.append(current.lowercased()) }
        return words
    }
}
