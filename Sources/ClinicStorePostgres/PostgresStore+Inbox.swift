import ClinicKit
import Foundation
import PostgresNIO

// The inbox's use cases awaited (issue 56, `InboxStore`): each one statement on a leased
// connection, no transaction around it (one statement is one by itself).

extension PostgresStore {
    /// The patient (no row: none) with their latest messages beside it (a row whose message
    /// columns are NULL: none), in one statement.
    public func inbox(clientId: Int64, unreadOnly: Bool, limit: Int) async throws -> [InboxMessage]? {
        let rows = try await awaitedRows("""
            SELECT m.* FROM clients c LEFT JOIN LATERAL (
                SELECT * FROM messages WHERE client_id = c.id \(unreadOnly ? "AND read_at IS NULL" : "") ORDER BY id DESC LIMIT $2
            ) m ON true WHERE c.id = $1 ORDER BY m.id DESC
            """, [clientId, limitBind(limit)])
        guard !rows.isEmpty else { return nil }
        return try rows.filter { try $0.value("id", in: "messages") as Int64? != nil }.map(InboxMessage.init(row:))
    }

    public func markRead(messageId: Int64, clientId: Int64, at now: Date) async throws -> InboxMessage? {
        try await awaitedRows(PostgresTransaction.markReadSQL, [now, messageId, clientId]).first.map(InboxMessage.init(row:))
    }

    /// One statement: the unread messages marked and counted.
    public func markAllRead(clientId: Int64, at now: Date) async throws -> Int {
        let rows = try await awaitedRows("""
            WITH marked AS (UPDATE messages SET read_at = $1 WHERE client_id = $2 AND read_at IS NULL RETURNING 1)
            SELECT count(*) AS marked FROM marked
            """, [now, clientId])
        return Int(try rows.first.map { try $0.value("marked", in: "messages") as Int64 } ?? 0)
    }

    public func unreadCount(clientId: Int64) async throws -> Int {
        let rows = try await awaitedRows(PostgresTransaction.unreadCountSQL, [clientId])
        return Int(try rows.first.map { try $0.value("unread", in: "messages") as Int64 } ?? 0)
    }

    /// One statement's rows, awaited on a connection of the pool, in SQLite's form.
    func awaitedRows(_ sql: String, _ binds: [any PostgresBindable]) async throws -> [StoredRowValues] {
        let sent = statementsSent
        return try await withConnection { connection in
            try await AwaitedConnection(connection: connection, logger: self.logger, sent: sent).rows(sql, binds)
                .map(PostgresTransaction.row)
        }
    }
}

// A text's delivery report and a reply's sender awaited (`PhoneNetworkStore`).
extension PostgresStore {
    /// One statement: the report recorded and whether the delivery is a text's.
    public func recordReport(_ report: TextReport, ofDelivery deliveryId: Int64, at now: Date) async throws -> Bool {
        let rows = try await awaitedRows(PostgresTransaction.recordTextReportSQL, [report.rawValue, now, deliveryId])
        return try rows.first.map { try $0.value("known", in: "deliveries") as Bool } ?? false
    }

    /// Two statements in one snapshot: the key check (the number's key is made under the
    /// personal-data key), then the confirmed phone of that key with its patient's language.
    public func replySender(number: String) async throws -> ReplySender? {
        let key = personalDataKey
        return try await readAwaited { tx in
            let check = try tx.value(String.self, try await tx.rows(PostgresTransaction.settingSQL, [PostgresTransaction.clientsKeyCheckSetting]))
            let numberKey = StoredPhone.key(of: number, cipher: try key.cipher(keyCheck: check))
            guard let row = try await tx.rows("""
                SELECT p.*, c.preferred_language FROM phones p LEFT JOIN clients c ON c.id = p.client_id
                WHERE p.number_key = $1 AND p.confirmed
                """, [numberKey]).first.map(PostgresTransaction.row) else { return nil }
            let language: String? = try row.value("preferred_language", in: "clients")
            return ReplySender(phone: try StoredPhone(row: row), language: language.flatMap(Language.init(rawValue:)) ?? .en)
        }
    }
}
