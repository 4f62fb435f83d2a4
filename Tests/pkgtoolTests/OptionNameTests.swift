import Foundation
import Testing
import TestSupport

/// One name for one idea in every command: `-o/--output` wherever an output is named, and
/// `--product-id` wherever a product is chosen, as aliases of the names each command had; an
/// unknown option gets the nearest known one, and a stray argument the option it was meant for.
@Suite(.offThePool) struct OptionNameTests {
    let scratch: Scratch

    init() throws {
        scratch = try Scratch()
    }

    /// `pkgtool ARGUMENTS`, which must be a usage error (exit 64) saying `message`.
    func usage(_ arguments: [String], says message: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try CommandRunner.pkgtool(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
    }

    @Test(arguments: ["-o", "--output", "--out"])
    func convertTakesEveryOutputName(name: String) throws {
        let pkg = try scratch.package("p", id: "com.example.p", version: "1.0", text: ["a.txt": "a"])
        let result = try CommandRunner.pkgtool(["convert", pkg, "--to", "background-assets", name, scratch.path("packs")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(exists(scratch.path("packs/com-example-p.json")))
    }

    @Test(arguments: ["-o", "--output", "--out"])
    func keygenTakesEveryOutputName(name: String) throws {
        let result = try CommandRunner.pkgtool(["keygen", name, scratch.path("keys/release")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(exists(scratch.path("keys/release.pem")) && exists(scratch.path("keys/release.pub.pem")))
    }

    @Test(arguments: ["-o", "--output", "--to"])
    func publishTakesEveryOutputName(name: String) throws {
        let pkg = try scratch.package("p", id: "com.example.p", version: "1.0", text: ["a.txt": "a"])
        let result = try CommandRunner.pkgtool(["publish", pkg, name, scratch.path("pub")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(exists(scratch.path("pub/catalog.json")) && exists(scratch.path("pub/com.example.p/1.0.pkg")))
    }

    /// `sync --product-id` chooses products as `--product` does, repeatable and mixed with it.
    @Test func syncTakesProductIdForItsProducts() throws {
        let a = try scratch.package("a", id: "com.example.a", version: "1.0", text: ["a.txt": "a"])
        let b = try scratch.package("b", id: "com.example.b", version: "1.0", text: ["b.txt": "b"])
        let c = try scratch.package("c", id: "com.example.c", version: "1.0", text: ["c.txt": "c"])
        #expect(try CommandRunner.pkgtool(["publish", a, b, c, "-o", scratch.path("pub")]).status == 0)
        let result = try CommandRunner.pkgtool(["sync", scratch.path("pub"), "--documents", scratch.path("Documents"),
                                                "--product-id", "com.example.a", "--product", "com.example.b"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(names(scratch.path("Documents")) == ["com.example.a", "com.example.b"])
        let unknown = try CommandRunner.pkgtool(["sync", scratch.path("pub"), "--documents", scratch.path("Documents"),
                                                 "--product-id", "com.example.nope", "--json"])
        #expect(unknown.status == 1)
        let products = unknown.json["products"] as? [[String: Any]] ?? []
        #expect(products.map { $0["productIdentifier"] as? String } == ["com.example.nope"], "\(unknown.stdout)")
        #expect(products.flatMap(codes) == ["unknown-product"], "\(unknown.stdout)")
    }

    /// A misspelt option is named with the nearest one, before anything else is found missing.
    @Test func unknownOptionGetsTheNearestOne() throws {
        let pkg = try scratch.package("p", version: "1.0", text: ["a.txt": "a"])
        try usage(["extract", pkg, "--documnets", scratch.path("D")], says: "Unknown option '--documnets'. Did you mean '--documents'?")
        try usage(["extract", pkg, "--product", "com.x", "--documents", scratch.path("D")],
                  says: "Unknown option '--product'. Did you mean '--product-id'?")
        try usage(["--json", "validate", pkg, "--max-szie", "1M"], says: "Unknown option '--max-szie'. Did you mean '--max-size'?")
        try usage(["convert", pkg, "--ot", "background-assets", "-o", scratch.path("packs")],
                  says: "Unknown option '--ot'. Did you mean '--to'?")
        // Nothing near: no guess.
        let far = try CommandRunner.pkgtool(["inspect", pkg, "--zebra"])
        #expect(far.status == 64 && far.stderr.contains("Unknown option '--zebra'") && !far.stderr.contains("Did you mean"), "\(far.stderr)")
        #expect(!exists(scratch.path("D")) && !exists(scratch.path("packs")))
    }

    /// `-o` on a command that installs points to where it installs.
    @Test func outputFlagOnACommandWithoutItPointsToItsDestination() throws {
        let pkg = try scratch.package("p", version: "1.0", text: ["a.txt": "a"])
        try usage(["extract", pkg, "-o", scratch.path("D")], says: "Unknown option '-o'. Did you mean '--documents'?")
        try usage(["sync", scratch.path("pub"), "-o", scratch.path("D")], says: "Unknown option '-o'. Did you mean '--documents'?")
        let validate = try CommandRunner.pkgtool(["validate", pkg, "-o", scratch.path("D")])
        #expect(validate.status == 64 && validate.stderr.contains("Unknown option '-o'") && !validate.stderr.contains("Did you mean"))
        #expect(!exists(scratch.path("D")))
    }

    /// A positional argument too many is named, with the option it was meant for.
    @Test func strayArgumentIsNamedWithItsOption() throws {
        let pkg = try scratch.package("p", version: "1.0", text: ["a.txt": "a"])
        let dest = scratch.path("DEST")
        try usage(["extract", pkg, dest], says: "unexpected argument \(dest); give the Documents folder with --documents \(dest)")
        try usage(["sync", scratch.path("pub"), dest], says: "unexpected argument \(dest); give the Documents folder with --documents \(dest)")
        try usage(["create", scratch.path("src-p"), dest], says: "unexpected argument \(dest); give the package to write with -o \(dest)")
        try usage(["keygen", dest], says: "unexpected argument \(dest); give the key files' base name with -o \(dest)")
        #expect(!exists(dest) && !exists(dest + ".pem"))
        // `--` ends the options; what follows is still counted.
        try usage(["extract", pkg, "--", dest], says: "unexpected argument \(dest)")
    }

    /// `pkgtool --help` lists every exit status, `3` of `sync --check` included.
    @Test func helpListsTheExitStatuses() throws {
        let help = try CommandRunner.pkgtool(["--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for status in ["0 success", "1 invalid package", "2 input unreadable", "3 updates available (sync --check only)",
                       "64 wrong usage", "130 / 143 interrupted"] {
            #expect(help.contains(status), "\(status): \(help)")
        }
    }

    /// The shell completions offer the aliases with the names they stand for: publish's,
    /// keygen's and convert's output, sync's products.
    @Test(arguments: [
        ("bash", ["(--to -o --output --keep)", "(--out -o --output)", "(--to --out -o --output --download-policy", "(--product --product-id --trust"]),
        ("zsh", ["{--to,-o,--output}", "{--out,-o,--output}'[Base name", "{--out,-o,--output}'[The folder", "{--product,--product-id}"]),
        ("fish", ["\"pkgtool publish\" o output to' -l 'to' -s 'o' -l 'output'", "\"pkgtool keygen\" o out output' -l 'out' -s 'o' -l 'output'",
                  "\"pkgtool convert\" o out output' -l 'out' -s 'o' -l 'output'", "-l 'product' -l 'product-id'"]),
    ])
    func completionsKnowTheAliases(shell: String, expected: [String]) throws {
        let script = try CommandRunner.pkgtool(["--generate-completion-script", shell]).stdout
        for fragment in expected {
            #expect(script.contains(fragment), "\(shell) completion lacks \(fragment)")
        }
        let help = try CommandRunner.pkgtool(["help", "sync"]).stdout
        #expect(help.contains("--product, --product-id <ID>"), "\(help)")
        let publish = try CommandRunner.pkgtool(["help", "publish"]).stdout
        #expect(publish.contains("-o, --to, --output <DIR>"), "\(publish)")
    }
}
