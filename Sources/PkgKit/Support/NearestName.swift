/// The name a near miss was meant to be, for "did you mean …?" advice: a misspelt command, or a
/// ContentInfo.plist key spelt the way a widely copied tutorial spells it.
public enum NearestName {
    /// The candidate closest to `text`, when it is close enough to be what was meant: at most a
    /// third of the candidate's length in edits (1 to 3), case ignored. Ties go to the first.
    public static func suggestion(for text: String, among candidates: some Sequence<String>) -> String? {
        let typed = Array(text.lowercased())
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(typed, Array(candidate.lowercased()))
            guard distance <= max(1, min(3, candidate.count / 3)) else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: the optimal
    /// string alignment distance, so that `craete` is one edit from `create`.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var before = [Int](), previous = Array(0...b.count), current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            (before, previous, current) = (previous, current, before.isEmpty ? [Int](repeating: 0, count: b.count + 1) : before)
        }
        return previous[b.count]
    }
}
