import Foundation

// A patient's record through the seam: the personal fields are sealed before a store sees
// them and opened after it gives them back, under the database's personal-data key.

extension ClinicStore {
    /// The cipher under the store's key (`PersonalDataKey.cipher`).
    package func cipher(_ tx: any StoreReading) throws -> FieldCipher {
        try personalDataKey.cipher(tx)
    }

    /// The cipher, with the key check stored if the store has none yet: for write
    /// transactions that are about to seal personal data.
    package func sealingCipher(_ tx: any StoreWriting) throws -> FieldCipher {
        try personalDataKey.sealingCipher(tx)
    }

    /// A patient with the personal fields opened (rows from before encryption have none).
    func client(_ tx: any StoreReading, id: Int64) throws -> Client? {
        try tx.storedClient(id: id).map { try opened(tx, $0) }
    }

    func client(_ tx: any StoreReading, login: String) throws -> Client? {
        try tx.storedClient(loginKey: Client.key(forLogin: login)).map { try opened(tx, $0) }
    }

    /// A patient by login with the personal fields left sealed (empty): what a log-in needs to
    /// check a password, so that a wrong password never depends on the key (a missing key
    /// would otherwise tell a known login from an unknown one).
    func sealedClient(_ tx: any StoreReading, login: String) throws -> Client? {
        try tx.storedClient(loginKey: Client.key(forLogin: login))?.client
    }

    package func opened(_ tx: any StoreReading, _ stored: StoredClient) throws -> Client {
        guard stored.personal != nil else { return stored.client }
        return try stored.opened(with: try cipher(tx))
    }

    /// Stores a patient with the personal fields sealed in `personal` and blank in the plain
    /// columns, and their search tokens (`PatientIndex`).
    func addClient(_ tx: any StoreWriting, _ client: Client) throws -> Client {
        let sealed = try SealedClient(client, cipher: try sealingCipher(tx))
        var added = client
        let id = try tx.insertClient(sealed.row, personal: sealed.personal)
        added.id = id
        try tx.replaceSearchTokens(ofClient: id, with: sealed.tokens)
        return added
    }

    /// Rewrites a patient's row, personal fields sealed again, and their search tokens.
    func updateClient(_ tx: any StoreWriting, _ client: Client) throws {
        let sealed = try SealedClient(client, cipher: try sealingCipher(tx))
        try tx.updateClient(sealed.row, personal: sealed.personal, hasEmail: sealed.hasEmail)
        if let id = client.id { try tx.replaceSearchTokens(ofClient: id, with: sealed.tokens) }
    }
}

extension StoredClient {
    /// The patient with the personal fields opened under `cipher`.
    package func opened(with cipher: FieldCipher) throws -> Client {
        var opened = client
        if let personal {
            opened.take(try cipher.open(personal, loginKey: client.loginKey))
        }
        return opened
    }
}
