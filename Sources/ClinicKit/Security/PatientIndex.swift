import Crypto
import Foundation

/// The front desk's search of patients by name, e-mail, phone, date of birth or login without
/// opening every sealed row: a keyed blind index. For each patient the store keeps, beside the
/// sealed fields, the HMAC of every prefix (2 to `longestPrefix` characters) of every
/// normalised word of the name, surname, e-mail address, phone, date of birth and login (a
/// walk-in's placeholder login is not indexed); a search computes the HMAC of the typed prefix
/// and asks the store which patients have it. Only the candidates found that way are opened,
/// and each is checked against the query in clear before it is shown (a truncated or colliding
/// token never shows a patient who does not match).
///
/// The index key is not the personal-data key: it is derived from it (HKDF-SHA256 with its own
/// label), so it is rotated with it and never serves to seal or open anything; knowing it does
/// not give the data key. What the index reveals to someone who reads the database without the
/// key: how many tokens each patient has (about the length of their name and address), and which
/// patients share a prefix token (equal prefixes are equal tokens), hence how common a prefix is.
/// It does not reveal the letters: a token is a keyed hash, and guessing needs the key.
/// docs/SECURITY.md says the same.
public enum PatientIndex {
    /// The shortest prefix indexed and searched ("li" finds "Lindqvist").
    public static let shortestPrefix = 2
    /// The longest prefix indexed; a longer query word is searched by this prefix and then
    /// checked in clear.
    public static let longestPrefix = 20
    /// The most words a query may have.
    public static let mostWords = 4
    /// Bytes kept of each HMAC (128 bits: collisions are checked in clear anyway).
    static let tokenLength = 16
    /// The setting that holds the check of the index key the stored tokens were made under.
    public static let checkSetting = "search.index_check"

    /// The index key of a personal-data key.
    static func key(_ cipher: FieldCipher) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: cipher.key, info: Data("clinic patient search index v1".utf8), outputByteCount: 32)
    }

    /// What the stored tokens' key is recognised by (not the key).
    package static func check(_ cipher: FieldCipher) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data("clinic patient search index check".utf8), using: key(cipher)))
            .prefix(tokenLength).hexString
    }

    /// A word as it is indexed and searched: compatibility-composed, case- and
    /// diacritic-folded ("Émile" and "EMILE" are "emile", "Ё" is "е"), letters and digits only.
    /// No transliteration: "Ivanov" does not find "Иванов" (a Latin spelling of a Cyrillic name
    /// has several forms, and guessing one would show strangers' records).
    public static func folded(_ text: String) -> String {
        let folded = text.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        return String(String.UnicodeScalarView(folded.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }))
    }

    /// The words a field is indexed under: each word between spaces and punctuation, and the
    /// whole field without them ("O'Brien-Smith": "o", "brien", "smith" and "obriensmith"), so a
    /// query typed with or without the punctuation finds it.
    static func words(of field: String) -> [String] {
        let parts = field.components(separatedBy: CharacterSet.alphanumerics.inverted).map(folded)
        return (parts + [folded(field)]).filter { !$0.isEmpty }
    }

    /// The words of a query: split at spaces only, each folded (punctuation inside a word is
    /// dropped, as in the index's whole-field word). Refused: no word of at least
    /// `shortestPrefix` letters or digits, a word shorter than that, or more than `mostWords`.
    public static func queryWords(_ query: String) throws -> [String] {
        let words = query.split(whereSeparator: { $0.isWhitespace }).map { folded(String($0)) }.filter { !$0.isEmpty }
        guard !words.isEmpty, words.count <= mostWords, words.allSatisfy({ $0.count >= shortestPrefix }),
              query.count <= 200 else {
            throw ClinicError.invalid(.staffPatientQuery, String(shortestPrefix), String(mostWords))
        }
        return words
    }

    /// A prefix's token under the index key.
    static func token(_ prefix: String, key: SymmetricKey) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data(prefix.utf8), using: key)).prefix(tokenLength)
    }

    /// The fields a patient is found by.
    static func fields(_ client: Client) -> [String] {
        [client.name, client.surname, client.hasOnlineAccount ? client.login : "", client.email ?? "", client.phone ?? "",
         client.birthDate ?? ""]
    }

    /// Every token of a patient, each once.
    static func tokens(_ client: Client, key: SymmetricKey) -> [Data] {
        var prefixes = Set<String>()
        for word in fields(client).flatMap(words) {
            let characters = Array(word)
            let longest = min(characters.count, longestPrefix)
            guard longest >= shortestPrefix else { continue }
            for length in shortestPrefix...longest { prefixes.insert(String(characters[0..<length])) }
        }
        return prefixes.sorted().map { token($0, key: key) }
    }

    /// The token a query word is looked up by (its first `longestPrefix` characters).
    static func token(ofQueryWord word: String, key: SymmetricKey) -> Data {
        token(String(word.prefix(longestPrefix)), key: key)
    }

    /// Whether a patient, opened, matches every word of a query (each word the start of one of
    /// the patient's indexed words): the check in clear after the index found the candidates.
    static func matches(_ client: Client, _ words: [String]) -> Bool {
        let own = fields(client).flatMap(Self.words)
        return words.allSatisfy { word in own.contains { $0.hasPrefix(word) } }
    }

    /// Writes a patient's tokens (after their row is written, in the same transaction).
    static func index(_ tx: any StoreWriting, _ client: Client, cipher: FieldCipher) throws {
        guard let id = client.id else { return }
        try tx.replaceSearchTokens(ofClient: id, with: tokens(client, key: key(cipher)))
    }

    /// Makes the index again under `cipher`'s key when the stored tokens were made under
    /// another (a database from before the index, a rotated key, a store copied without it).
    /// One transaction; idempotent, so two servers doing it at once end with the same index.
    /// A stored patient's tokens under `cipher`'s key, for a rebuild a store runs itself (its
    /// personal fields opened with `cipher` first); nil for a row with no id.
    package static func rebuildTokens(_ stored: StoredClient, cipher: FieldCipher) throws -> (clientId: Int64, tokens: [Data])? {
        let client = stored.personal == nil ? stored.client : try stored.opened(with: cipher)
        guard let id = client.id else { return nil }
        return (id, tokens(client, key: key(cipher)))
    }

    package static func rebuild(_ tx: any StoreWriting, cipher: FieldCipher, open: (StoredClient) throws -> Client) throws {
        try tx.clearSearchIndex()
        let key = key(cipher)
        var after: Int64 = 0
        while true {
            let page = try tx.storedClients(after: after, limit: 500)
            guard let last = page.last?.client.id else { break }
            for stored in page {
                let client = try open(stored)
                if let id = client.id { try tx.replaceSearchTokens(ofClient: id, with: tokens(client, key: key)) }
            }
            after = last
        }
        try tx.setSearchIndexCheck(check(cipher))
    }
}

extension ClinicStore {
    /// The index is made again when its tokens are not under this store's key; returns the
    /// cipher to search with, or nil when nothing is sealed yet (no patient, nothing to find).
    func currentPatientIndex() throws -> FieldCipher? {
        let state = try reading { tx -> (cipher: FieldCipher, stale: Bool)? in
            guard try tx.personalDataKeyCheck() != nil else { return nil }
            let cipher = try cipher(tx)
            return (cipher, try tx.searchIndexCheck() != PatientIndex.check(cipher))
        }
        guard let state else { return nil }
        if state.stale { _ = try writing { tx in try makePatientIndexCurrent(tx) } }
        return state.cipher
    }

    /// The index made again in the caller's write transaction when it was not made under the
    /// current key; the key's cipher.
    package func makePatientIndexCurrent(_ tx: any StoreWriting) throws -> FieldCipher {
        let cipher = try cipher(tx)
        if try tx.searchIndexCheck() != PatientIndex.check(cipher) {
            try PatientIndex.rebuild(tx, cipher: cipher) { try opened(tx, $0) }
        }
        return cipher
    }
}
