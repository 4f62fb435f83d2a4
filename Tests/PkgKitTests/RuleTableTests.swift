import Crypto
import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// One row of the rule table: a package that should (or should not) draw `code`.
struct RuleCase: Sendable, CustomTestStringConvertible {
    let code: DiagnosticCode
    let name: String
    let triggers: Bool
    let make: @Sendable (Scratch) throws -> (String, RuleContext)

    var testDescription: String { "\(triggers ? "triggers" : "near miss") \(code.rawValue): \(name)" }
}

typealias F = XarCrafter.File

/// Helpers that build packages in a temp folder.
enum Make {
    static func ctx(limits: PackageLimits = PackageLimits(), product: String? = nil, version: String? = nil,
                    previous: PreviousPackage? = nil) -> RuleContext {
        RuleContext(purpose: .validate, limits: limits, expectedProductIdentifier: product,
                    expectedContentVersion: version, previous: previous)
    }

    static let plist = XarCrafter.contentInfo()

    /// A valid package's entries plus `extra`.
    static func valid(_ extra: [F] = []) -> [F] {
        [plist, .file("Contents/a.txt", "hello")] + extra
    }

    static func xar(_ files: [F], name: String = "p.pkg", truncatedTo: Int? = nil) -> @Sendable (Scratch) throws -> String {
        { dir in try XarCrafter(files).write(to: dir.path(name), truncatedTo: truncatedTo) }
    }

    /// A crafted xar checked with the default context.
    static func xarCase(_ files: [F], name: String = "p.pkg", context: RuleContext = ctx()) -> @Sendable (Scratch) throws -> (String, RuleContext) {
        let make = xar(files, name: name)
        return { dir in (try make(dir), context) }
    }

    /// Writes a package root into `dir/root` with the given files (name → bytes, mode).
    static func root(_ dir: Scratch, _ files: [(String, [UInt8], Int)], plist: [UInt8]? = XarCrafter.plist()) throws -> String {
        try dir.mkdir("root/Contents")
        if let plist { try dir.write("root/ContentInfo.plist", plist) }
        for (name, bytes, mode) in files { try dir.write("root/" + name, bytes, mode: mode) }
        return dir.path("root")
    }

    static func folderCase(_ files: [(String, [UInt8], Int)], context: RuleContext = ctx()) -> @Sendable (Scratch) throws -> (String, RuleContext) {
        { dir in (try root(dir, files), context) }
    }

    /// `bsdtar` of a root folder into `format` (`ustar`, `zip`).
    static func archive(_ dir: Scratch, root: String, format: String, name: String = "p.pkg") throws -> String {
        let out = dir.path(name)
        var members = ["Contents"]
        if FileManager.default.fileExists(atPath: root + "/ContentInfo.plist") { members.insert("ContentInfo.plist", at: 0) }
        let extra = (try FileManager.default.contentsOfDirectory(atPath: root)).filter { !["Contents", "ContentInfo.plist"].contains($0) }.sorted()
        let status = try bsdtar(["--format", format, "-cf", out, "-C", root] + members + extra)
        precondition(status == 0, "bsdtar failed")
        return out
    }

    static func archiveCase(_ format: String, _ files: [(String, [UInt8], Int)], context: RuleContext = ctx()) -> @Sendable (Scratch) throws -> (String, RuleContext) {
        { dir in (try archive(dir, root: root(dir, files), format: format), context) }
    }

    static func text(_ s: String) -> [UInt8] { Array(s.utf8) }

    static func pe() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 0x100)
        bytes[0] = UInt8(ascii: "M"); bytes[1] = UInt8(ascii: "Z")
        bytes[0x3C] = 0x80
        bytes[0x80] = UInt8(ascii: "P"); bytes[0x81] = UInt8(ascii: "E")
        return bytes
    }

    static func mzWithoutPE() -> [UInt8] {
        var bytes = pe()
        bytes[0x80] = UInt8(ascii: "X")
        return bytes
    }
}

@Suite(.libArchive) struct RuleTableTests {
    static let cases: [RuleCase] = {
        var c: [RuleCase] = []
        func add(_ code: DiagnosticCode, _ name: String, _ triggers: Bool, _ make: @escaping @Sendable (Scratch) throws -> (String, RuleContext)) {
            c.append(RuleCase(code: code, name: name, triggers: triggers, make: make))
        }
        let valid = Make.valid()

        // bad-extension
        add(.badExtension, "xar named .zip", true, Make.xarCase(valid, name: "p.zip"))
        add(.badExtension, "xar named p.pkg.bak", true, Make.xarCase(valid, name: "p.pkg.bak"))
        add(.badExtension, "xar named .pkg", false, Make.xarCase(valid))
        add(.badExtension, "folder has no name to judge", false, Make.folderCase([("Contents/a.txt", Make.text("x"), 0o644)]))

        // unreadable-archive
        add(.unreadableArchive, "random bytes", true) { dir in
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return (try dir.write("p.pkg", [0x01, 0x02] + bytes), Make.ctx())
        }
        add(.unreadableArchive, "truncated xar (heap cut)", true) { dir in
            let files = [Make.plist, F(path: "Contents/a.txt", data: Array(repeating: 0x41, count: 4000), encoding: .stored)]
            let full = XarCrafter(files).build().count
            return (try XarCrafter(files).write(to: dir.path("p.pkg"), truncatedTo: full - 1000), Make.ctx())
        }
        add(.unreadableArchive, "truncated xar (TOC cut)", true) { dir in
            (try XarCrafter(valid).write(to: dir.path("p.pkg"), truncatedTo: 60), Make.ctx())
        }
        add(.unreadableArchive, "empty file", true) { dir in (try dir.write("p.pkg", []), Make.ctx()) }
        add(.unreadableArchive, "valid xar", false, Make.xarCase(valid))
        add(.unreadableArchive, "valid ustar", false, Make.archiveCase("ustar", [("Contents/a.txt", Make.text("x"), 0o644)]))
        add(.unreadableArchive, "valid zip", false, Make.archiveCase("zip", [("Contents/a.txt", Make.text("x"), 0o644)]))

        // checksum-mismatch
        add(.checksumMismatch, "wrong extracted sha1", true, Make.xarCase([Make.plist, F(path: "Contents/a.txt", data: Make.text("hello"), corruptChecksum: true)]))
        add(.checksumMismatch, "wrong archived sha1", true, Make.xarCase([Make.plist, F(path: "Contents/a.txt", data: Make.text("hello"), corruptArchivedChecksum: true)]))
        add(.checksumMismatch, "wrong stored-file sha1", true, Make.xarCase([Make.plist, F(path: "Contents/a.txt", data: Make.text("hello"), encoding: .stored, corruptChecksum: true)]))
        add(.checksumMismatch, "right sha1s", false, Make.xarCase([Make.plist, F(path: "Contents/a.txt", data: Make.text("hello"), encoding: .stored)]))

        // missing-content-info
        add(.missingContentInfo, "xar without plist", true, Make.xarCase([.file("Contents/a.txt", "x")]))
        add(.missingContentInfo, "plist only inside Contents", true, Make.xarCase([.file("Contents/a.txt", "x"), F(path: "Contents/ContentInfo.plist", data: XarCrafter.plist())]))
        add(.missingContentInfo, "folder without plist", true) { dir in (try Make.root(dir, [("Contents/a.txt", Make.text("x"), 0o644)], plist: nil), Make.ctx()) }
        add(.missingContentInfo, "xar with plist", false, Make.xarCase(valid))

        // invalid-content-info
        add(.invalidContentInfo, "not a plist", true, Make.xarCase([F(path: "ContentInfo.plist", data: Make.text("hello <world")), .file("Contents/a.txt", "x")]))
        add(.invalidContentInfo, "integer ContentVersion", true, Make.xarCase([F(path: "ContentInfo.plist", data: Make.text("<plist><dict><key>ContentVersion</key><integer>1</integer><key>IAPProductIdentifier</key><string>a.b</string></dict></plist>")), .file("Contents/a.txt", "x")]))
        add(.invalidContentInfo, "array top level", true, Make.xarCase([F(path: "ContentInfo.plist", data: Make.text("<plist><array><string>1.0</string></array></plist>")), .file("Contents/a.txt", "x")]))
        add(.invalidContentInfo, "binary plist is fine", false) { dir in
            let data = try PropertyListSerialization.data(fromPropertyList: ["ContentVersion": "1.0", "IAPProductIdentifier": "com.example.book"], format: .binary, options: 0)
            return (try XarCrafter([F(path: "ContentInfo.plist", data: Array(data)), .file("Contents/a.txt", "x")]).write(to: dir.path("p.pkg")), Make.ctx())
        }

        // missing-key
        add(.missingKey, "no IAPProductIdentifier", true, Make.xarCase([F(path: "ContentInfo.plist", data: Make.text("<plist><dict><key>ContentVersion</key><string>1.0</string></dict></plist>")), .file("Contents/a.txt", "x")]))
        add(.missingKey, "no ContentVersion (tar)", true) { dir in
            let root = try Make.root(dir, [("Contents/a.txt", Make.text("x"), 0o644)], plist: Make.text("<plist><dict><key>IAPProductIdentifier</key><string>a.b</string></dict></plist>"))
            return (try Make.archive(dir, root: root, format: "ustar"), Make.ctx())
        }
        add(.missingKey, "both keys", false, Make.xarCase(valid))

        // invalid-content-version
        add(.invalidContentVersion, "01", true, Make.xarCase([XarCrafter.contentInfo(version: "01"), .file("Contents/a.txt", "x")]))
        add(.invalidContentVersion, "1.2.3.4", true, Make.xarCase([XarCrafter.contentInfo(version: "1.2.3.4"), .file("Contents/a.txt", "x")]))
        add(.invalidContentVersion, "2.13.4", false, Make.xarCase([XarCrafter.contentInfo(version: "2.13.4"), .file("Contents/a.txt", "x")]))

        // invalid-product-identifier
        add(.invalidProductIdentifier, "a/b", true, Make.xarCase([XarCrafter.contentInfo(id: "a/b"), .file("Contents/a.txt", "x")]))
        add(.invalidProductIdentifier, "..", true, Make.xarCase([XarCrafter.contentInfo(id: "com..x"), .file("Contents/a.txt", "x")]))
        add(.invalidProductIdentifier, "com.example_1.x", false, Make.xarCase([XarCrafter.contentInfo(id: "com.example_1.x"), .file("Contents/a.txt", "x")]))

        // product-identifier-mismatch
        add(.productIdentifierMismatch, "--product-id differs", true, Make.xarCase(valid, context: Make.ctx(product: "com.example.other")))
        add(.productIdentifierMismatch, "previous package's id differs", true, Make.xarCase(valid, context: Make.ctx(previous: PreviousPackage(productIdentifier: "com.example.other", contentVersion: ContentVersion("0.9")!))))
        add(.productIdentifierMismatch, "--product-id agrees", false, Make.xarCase(valid, context: Make.ctx(product: "com.example.book")))
        add(.productIdentifierMismatch, "previous id agrees", false, Make.xarCase(valid, context: Make.ctx(previous: PreviousPackage(productIdentifier: "com.example.book", contentVersion: ContentVersion("0.9")!))))

        // content-version-mismatch
        add(.contentVersionMismatch, "--content-version 2.0 vs 1.0", true, Make.xarCase(valid, context: Make.ctx(version: "2.0")))
        add(.contentVersionMismatch, "--content-version 1.0 agrees", false, Make.xarCase(valid, context: Make.ctx(version: "1.0")))

        // missing-contents
        add(.missingContents, "no Contents", true, Make.xarCase([Make.plist]))
        add(.missingContents, "empty Contents folder", true, Make.xarCase([Make.plist, .dir("Contents"), .dir("Contents/sub")]))
        add(.missingContents, "Contents holds only a link", true, Make.xarCase([Make.plist, .symlink("Contents/l", "x")]))
        add(.missingContents, "one file in a subfolder", false, Make.xarCase([Make.plist, .file("Contents/deep/down/a.txt", "x")]))

        // outside-contents
        add(.outsideContents, "README at root", true, Make.xarCase(Make.valid([.file("README", "x")])))
        add(.outsideContents, "folder at root (zip)", true, Make.archiveCase("zip", [("Contents/a.txt", Make.text("x"), 0o644), ("Other/b.txt", Make.text("y"), 0o644)]))
        add(.outsideContents, "Contents as a file", true, Make.xarCase([Make.plist, .file("Contents", "x")]))
        add(.outsideContents, "only plist and Contents", false, Make.xarCase(valid))

        // unsafe-path
        add(.unsafePath, "name with .. components", true, Make.xarCase(Make.valid([F(path: "Contents/../../evil", data: Make.text("x"), rawName: true)])))
        add(.unsafePath, "base64 ../x", true, Make.xarCase(Make.valid([F(path: "../x", data: Make.text("x"), nameBase64: true, rawName: true)])))
        add(.unsafePath, "absolute name", true, Make.xarCase(Make.valid([F(path: "/tmp/evil", data: Make.text("x"), rawName: true)])))
        add(.unsafePath, "control character (base64)", true, Make.xarCase(Make.valid([F(path: "Contents/a\u{1B}b", data: Make.text("x"), nameBase64: true)])))
        add(.unsafePath, "component over 255 bytes", true, Make.xarCase(Make.valid([.file("Contents/" + String(repeating: "n", count: 256), "x")])))
        add(.unsafePath, "invalid UTF-8 name (folder and tar)", true) { dir in
            let root = try Make.root(dir, [("Contents/a.txt", Make.text("x"), 0o644)])
            var bytes = Array((root + "/Contents/bad").utf8) + [0xFF, 0xFE, 0]
            let fd = bytes.withUnsafeMutableBufferPointer { $0.baseAddress!.withMemoryRebound(to: CChar.self, capacity: $0.count) { open($0, O_CREAT | O_WRONLY, 0o644) } }
            #expect(fd >= 0)
            close(fd)
            let tar = try Make.archive(dir, root: root, format: "ustar")
            let folderCodes = Set(try PackageCheck.run(root, context: Make.ctx()).diagnostics.map(\.code))
            #expect(folderCodes.contains(.unsafePath))
            return (tar, Make.ctx())
        }
        add(.unsafePath, "dots inside a name and 255-byte name", false, Make.xarCase(Make.valid([.file("Contents/a..b.txt", "x"), .file("Contents/" + String(repeating: "n", count: 255), "y"), .file("Contents/caf\u{E9}.txt", "z")])))

        // duplicate-entry
        add(.duplicateEntry, "same file twice", true, Make.xarCase(Make.valid([.file("Contents/a.txt", "again")])))
        add(.duplicateEntry, "different names", false, Make.xarCase(Make.valid([.file("Contents/b.txt", "other")])))

        // size-limit
        add(.sizeLimit, "payload over maxSize", true, Make.xarCase(Make.valid([F(path: "Contents/big", data: Array(repeating: 0, count: 100_000))]), context: Make.ctx(limits: PackageLimits(maxSize: 50_000))))
        add(.sizeLimit, "archive file over maxSize", true, Make.xarCase(valid, context: Make.ctx(limits: PackageLimits(maxSize: 200))))
        add(.sizeLimit, "lying declared size", true, Make.xarCase(Make.valid([F(path: "Contents/big", data: Array(repeating: 0, count: 100), declaredSize: 10_000_000)]), context: Make.ctx(limits: PackageLimits(maxSize: 1_000_000))))
        add(.sizeLimit, "under maxSize", false, Make.xarCase(Make.valid([F(path: "Contents/big", data: Array(repeating: 0, count: 100_000))]), context: Make.ctx(limits: PackageLimits(maxSize: 1_000_000))))

        // executable-code
        let magics: [(String, [UInt8])] = [
            ("ELF", [0x7F] + Make.text("ELF") + [2, 1, 1, 0]),
            ("Mach-O 64 LE", [0xCF, 0xFA, 0xED, 0xFE, 7, 0, 0, 1]),
            ("Mach-O 32 BE", [0xFE, 0xED, 0xFA, 0xCE, 0, 0, 0, 7]),
            ("script", Make.text("#!/bin/sh\necho hi\n")),
            ("ar", Make.text("!<arch>\nfoo.o/")),
            ("PE", Make.pe()),
            ("universal", [0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 2] + [UInt8](repeating: 0, count: 40)),
        ]
        for (name, bytes) in magics {
            add(.executableCode, name, true, Make.xarCase(Make.valid([F(path: "Contents/data.bin", data: bytes)])))
        }
        add(.executableCode, "ELF in tar", true, Make.archiveCase("ustar", [("Contents/lib.so", magics[0].1, 0o644)]))
        add(.executableCode, "script in folder", true, Make.folderCase([("Contents/run.txt", magics[3].1, 0o644)]))
        add(.executableCode, "Java class", false, Make.xarCase(Make.valid([F(path: "Contents/A.class", data: [0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 0x34] + [UInt8](repeating: 0, count: 40))])))
        add(.executableCode, "MZ without PE header", false, Make.xarCase(Make.valid([F(path: "Contents/mz.txt", data: Make.mzWithoutPE())])))
        add(.executableCode, "# comment, not #!", false, Make.xarCase(Make.valid([.file("Contents/notes.md", "# title\n!not a script")])))

        // executable-permission
        add(.executablePermission, "xar file mode 0755", true, Make.xarCase(Make.valid([.file("Contents/b.txt", "x", mode: "0755")])))
        add(.executablePermission, "tar file mode 0744", true, Make.archiveCase("ustar", [("Contents/b.txt", Make.text("x"), 0o744)]))
        add(.executablePermission, "folder file mode 0711", true, Make.folderCase([("Contents/b.txt", Make.text("x"), 0o711)]))
        add(.executablePermission, "0644 file, 0755 folder", false, Make.xarCase(Make.valid([F(path: "Contents/d", type: "directory", mode: "0755"), .file("Contents/d/b.txt", "x", mode: "0644")])))

        // symlink-escape
        add(.symlinkEscape, "../../etc", true, Make.xarCase(Make.valid([.symlink("Contents/l", "../../etc/passwd")])))
        add(.symlinkEscape, "absolute target", true, Make.xarCase(Make.valid([.symlink("Contents/l", "/etc/passwd")])))
        add(.symlinkEscape, "to ContentInfo.plist", true, Make.xarCase(Make.valid([.symlink("Contents/l", "../ContentInfo.plist")])))
        add(.symlinkEscape, "chain leaving Contents", true, Make.xarCase(Make.valid([.symlink("Contents/a", "b"), .symlink("Contents/b", "../..")])))
        add(.symlinkEscape, "loop", true, Make.xarCase(Make.valid([.symlink("Contents/x", "y"), .symlink("Contents/y", "x")])))
        add(.symlinkEscape, "sibling target", false, Make.xarCase(Make.valid([.symlink("Contents/l", "a.txt"), .dir("Contents/sub"), .symlink("Contents/sub/up", "../a.txt")])))

        // hardlink-escape
        add(.hardlinkEscape, "xar link to a root file", true, Make.xarCase([Make.plist, F(path: "other.txt", data: Make.text("x"), hardlink: "original", id: 1), .file("Contents/a.txt", "x"), F(path: "Contents/l", hardlink: "1", id: 9)]))
        add(.hardlinkEscape, "tar link to ContentInfo.plist", true) { dir in
            let root = try Make.root(dir, [("Contents/a.txt", Make.text("x"), 0o644)])
            try FileManager.default.linkItem(atPath: root + "/ContentInfo.plist", toPath: root + "/Contents/l")
            return (try Make.archive(dir, root: root, format: "ustar"), Make.ctx())
        }
        add(.hardlinkEscape, "tar link inside Contents", false) { dir in
            let root = try Make.root(dir, [("Contents/a.txt", Make.text("x"), 0o644)])
            try FileManager.default.linkItem(atPath: root + "/Contents/a.txt", toPath: root + "/Contents/b.txt")
            return (try Make.archive(dir, root: root, format: "ustar"), Make.ctx())
        }
        add(.hardlinkEscape, "xar link inside Contents", false, Make.xarCase([Make.plist, .dir("Contents"), F(path: "Contents/a.txt", data: Make.text("x"), hardlink: "original", id: 5), F(path: "Contents/l", hardlink: "5", id: 6)]))

        // special-file
        add(.specialFile, "xar character device", true, Make.xarCase(Make.valid([F(path: "Contents/null", type: "character special")])))
        add(.specialFile, "xar fifo", true, Make.xarCase(Make.valid([F(path: "Contents/pipe", type: "fifo")])))
        add(.specialFile, "folder fifo", true) { dir in
            let root = try Make.root(dir, [("Contents/a.txt", Make.text("x"), 0o644)])
            #expect(mkfifo(root + "/Contents/pipe", 0o644) == 0)
            return (root, Make.ctx())
        }
        add(.specialFile, "files, folders and links", false, Make.xarCase(Make.valid([.dir("Contents/d"), .symlink("Contents/l", "a.txt")])))

        // version-not-bumped
        add(.versionNotBumped, "same version", true, Make.xarCase(valid, context: Make.ctx(previous: PreviousPackage(productIdentifier: nil, contentVersion: ContentVersion("1.0.0")!))))
        add(.versionNotBumped, "lower version", true, Make.xarCase(valid, context: Make.ctx(previous: PreviousPackage(productIdentifier: nil, contentVersion: ContentVersion("1.10")!))))
        add(.versionNotBumped, "higher version", false, Make.xarCase(valid, context: Make.ctx(previous: PreviousPackage(productIdentifier: nil, contentVersion: ContentVersion("0.9.9")!))))
        add(.versionNotBumped, "no previous", false, Make.xarCase(valid))

        // dangling-symlink
        add(.danglingSymlink, "link to a missing file", true, Make.xarCase(Make.valid([.symlink("Contents/l", "missing.txt")])))
        add(.danglingSymlink, "link to an existing file", false, Make.xarCase(Make.valid([.symlink("Contents/l", "a.txt")])))

        // case-collision
        add(.caseCollision, "A.txt and a.txt", true, Make.xarCase(Make.valid([.file("Contents/A.txt", "y")])))
        // In a folder the two spellings stay apart; libarchive folds a xar's names to NFC, which
        // makes them one path there (see nfdTwinInXarIsRefused).
        add(.caseCollision, "NFC and NFD (folder)", true, Make.folderCase([("Contents/a.txt", Make.text("x"), 0o644), ("Contents/caf\u{E9}", Make.text("y"), 0o644), ("Contents/cafe\u{301}", Make.text("z"), 0o644)]))
        add(.caseCollision, "upper and lower non-ASCII (xar)", true, Make.xarCase(Make.valid([.file("Contents/\u{C9}t\u{E9}", "y"), .file("Contents/\u{E9}t\u{E9}", "z")])))
        add(.caseCollision, "distinct names", false, Make.xarCase(Make.valid([.file("Contents/b.txt", "y"), .file("Contents/a.txt.bak", "z")])))

        // code-bundle
        add(.codeBundle, "Foo.app folder", true, Make.xarCase(Make.valid([.file("Contents/Foo.app/Info.plist", "x")])))
        add(.codeBundle, "Bar.framework folder", true, Make.xarCase(Make.valid([.dir("Contents/Bar.framework")])))
        add(.codeBundle, "Foo.app regular file and 'app' folder", false, Make.xarCase(Make.valid([.file("Contents/Foo.app", "x"), .file("Contents/app/b.txt", "y")])))

        // junk-file
        add(.junkFile, ".DS_Store", true, Make.xarCase(Make.valid([.file("Contents/.DS_Store", "x")])))
        add(.junkFile, "AppleDouble", true, Make.xarCase(Make.valid([.file("Contents/._a.txt", "x")])))
        add(.junkFile, "__MACOSX folder", true, Make.xarCase(Make.valid([.file("__MACOSX/Contents/._a.txt", "x")])))
        add(.junkFile, "ordinary dotless names", false, Make.xarCase(Make.valid([.file("Contents/DS_Store", "x"), .file("Contents/git/b.txt", "y")])))

        // content-unchanged
        add(.contentUnchanged, "bumped, same bytes", true) { dir in
            let old = try XarCrafter(valid).write(to: dir.path("old.pkg"))
            let previous = try #require(try PackageCheck.run(old, context: Make.ctx()).asPrevious)
            let new = try XarCrafter([XarCrafter.contentInfo(version: "1.1"), .file("Contents/a.txt", "hello")]).write(to: dir.path("new.pkg"))
            return (new, Make.ctx(previous: previous))
        }
        add(.contentUnchanged, "bumped, one byte changed", false) { dir in
            let old = try XarCrafter(valid).write(to: dir.path("old.pkg"))
            let previous = try #require(try PackageCheck.run(old, context: Make.ctx()).asPrevious)
            let new = try XarCrafter([XarCrafter.contentInfo(version: "1.1"), .file("Contents/a.txt", "hellO")]).write(to: dir.path("new.pkg"))
            return (new, Make.ctx(previous: previous))
        }
        add(.contentUnchanged, "bumped, file added", false) { dir in
            let old = try XarCrafter(valid).write(to: dir.path("old.pkg"))
            let previous = try #require(try PackageCheck.run(old, context: Make.ctx()).asPrevious)
            let new = try XarCrafter([XarCrafter.contentInfo(version: "1.1"), .file("Contents/a.txt", "hello"), .file("Contents/b.txt", "")]).write(to: dir.path("new.pkg"))
            return (new, Make.ctx(previous: previous))
        }

        // unknown-key
        add(.unknownKey, "extra key", true, Make.xarCase([F(path: "ContentInfo.plist", data: Make.text("<plist><dict><key>ContentVersion</key><string>1.0</string><key>IAPProductIdentifier</key><string>a.b</string><key>Extra</key><true/></dict></plist>")), .file("Contents/a.txt", "x")]))
        add(.unknownKey, "only the two keys", false, Make.xarCase(valid))
        return c
    }()

    @Test func everyCodeHasATriggerAndANearMiss() {
        for code in DiagnosticCode.allCases where !DiagnosticCode.notFromRules.contains(code) {
            #expect(Self.cases.contains { $0.code == code && $0.triggers }, "no package triggers \(code.rawValue)")
            #expect(Self.cases.contains { $0.code == code && !$0.triggers }, "no near miss for \(code.rawValue)")
        }
    }

    @Test(.timeLimit(.minutes(2)), arguments: cases)
    func rule(_ row: RuleCase) throws {
        let dir = try Scratch()
        let (path, context) = try row.make(dir)
        let check = try PackageCheck.run(path, context: context)
        let codes = Set(check.diagnostics.map(\.code))
        let listing = check.diagnostics.map { "\($0.code.rawValue) \($0.path ?? "-"): \($0.message)" }.joined(separator: "\n")
        if row.triggers {
            #expect(codes.contains(row.code), "expected \(row.code.rawValue); got:\n\(listing)")
            let found = check.diagnostics.filter { $0.code == row.code }
            #expect(found.allSatisfy { $0.severity == row.code.defaultSeverity })
            if row.code.defaultSeverity == .error { #expect(!check.isValid()) }
        } else {
            #expect(!codes.contains(row.code), "did not expect \(row.code.rawValue); got:\n\(listing)")
        }
        for diagnostic in check.diagnostics {
            #expect(!diagnostic.message.contains("\n"))
        }
    }

    /// The baseline package is valid with no findings in every container.
    @Test func baselineIsCleanInEveryFormat() throws {
        let dir = try Scratch()
        let xar = try XarCrafter(Make.valid()).write(to: dir.path("x.pkg"))
        let root = try Make.root(dir, [("Contents/a.txt", Make.text("hello"), 0o644), ("Contents/sub/b.txt", Make.text("b"), 0o644)])
        let tar = try Make.archive(dir, root: root, format: "ustar", name: "t.pkg")
        let zip = try Make.archive(dir, root: root, format: "zip", name: "z.pkg")
        for (path, format) in [(xar, PackageFormat.xar), (tar, .tar), (zip, .zip), (root, .folder)] {
            let check = try PackageCheck.run(path, context: Make.ctx())
            #expect(check.diagnostics == [], "\(path): \(check.diagnostics)")
            #expect(check.facts.format == format)
            #expect(check.contentInfo == ContentInfo(contentVersion: "1.0", productIdentifier: "com.example.book"))
        }
    }

    @Test func countsPayloadFilesOnly() throws {
        let dir = try Scratch()
        let xar = try XarCrafter([Make.plist, .file("Contents/a.txt", "hello"), .file("Contents/d/b.txt", "abc"), .symlink("Contents/l", "a.txt")]).write(to: dir.path("x.pkg"))
        let check = try PackageCheck.run(xar, context: Make.ctx())
        #expect(check.facts.fileCount == 2)
        #expect(check.facts.payloadBytes == 8)
    }

    @Test(.timeLimit(.minutes(2)))
    func duplicatePathIsReportedAndDoesNotHang() throws {
        let dir = try Scratch()
        let files = [Make.plist, .file("Contents/a.txt", "one"), .file("Contents/a.txt", "two"), .file("Contents/a.txt", "three"), .dir("Contents/d"), .dir("Contents/d")]
        let path = try XarCrafter(files).write(to: dir.path("dup.pkg"))
        let check = try PackageCheck.run(path, context: Make.ctx())
        let duplicates = check.diagnostics.filter { $0.code == .duplicateEntry }
        #expect(duplicates.contains { $0.path == "Contents/a.txt" })
        #expect(!check.isValid())
    }

    @Test func nfdTwinInXarIsRefused() throws {
        let dir = try Scratch()
        let path = try XarCrafter(Make.valid([.file("Contents/caf\u{E9}", "y"), .file("Contents/cafe\u{301}", "z")])).write(to: dir.path("p.pkg"))
        let codes = Set(try PackageCheck.run(path, context: Make.ctx()).diagnostics.map(\.code))
        #expect(codes.contains(.caseCollision) || codes.contains(.duplicateEntry))
    }

    @Test func nonASCIINamesAreReadFromEveryContainer() throws {
        let dir = try Scratch()
        let names = ["Contents/caf\u{E9}.txt", "Contents/\u{65E5}\u{672C}.txt"]
        let xar = try XarCrafter([Make.plist, .file(names[0], "a"), F(path: names[1], data: Make.text("b"), nameBase64: true)]).write(to: dir.path("x.pkg"))
        let root = try Make.root(dir, names.map { ($0, Make.text("a"), 0o644) })
        let tar = try Make.archive(dir, root: root, format: "ustar", name: "t.pkg")
        let zip = try Make.archive(dir, root: root, format: "zip", name: "z.pkg")
        for path in [xar, tar, zip, root] {
            let check = try PackageCheck.run(path, context: Make.ctx())
            #expect(check.diagnostics == [], "\(path): \(check.diagnostics)")
            let paths = Set(check.facts.entries.map(\.path.string))
            #expect(paths.isSuperset(of: names), "\(path): \(paths)")
        }
    }
}
