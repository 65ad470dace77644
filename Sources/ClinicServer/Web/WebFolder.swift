import ClinicKit
import Foundation

/// An appointment's files and conversation (`AppointmentFolder`) as the templates read them,
/// on the patient's appointment page and the staff's thread page (`base` is the appointment's
/// address on that side).
enum WebFolder {
    /// `paged`: the page shows earlier messages (a cursor was given), with a link to the latest.
    static func values(_ folder: AppointmentFolder, _ language: Language, base: String, paged: Bool = false) -> [String: Any] {
        let labels = WebText.labels(language)
        var values: [String: Any] = [
            "files": folder.files.map { file -> [String: Any] in
                var item: [String: Any] = ["aid": file.id, "name": file.name, "size": sizeText(file.size, language),
                                           "type": file.contentType, "href": "\(base)/attachments/\(file.id)",
                                           "byClinic": file.author == .staff,
                                           "removable": folder.patientMayChange && file.author == .patient]
                if file.hasThumbnail { item["thumbnail"] = "\(base)/attachments/\(file.id)/thumbnail" }
                return item
            },
            "hasFiles": !folder.files.isEmpty,
            "mayAttach": folder.patientMayChange && folder.files.filter { $0.author == .patient }.count < AttachmentLimits.maximumFiles,
            "maximumFiles": AttachmentLimits.maximumFiles,
            "maximumMiB": AttachmentLimits.maximumBytes / (1024 * 1024),
        ]
        if let patient = folder.patientName { values["patientName"] = patient }
        if let conversation = folder.conversation {
            var thread: [String: Any] = [
                "closed": conversation.state == .closed,
                "messages": conversation.messages.map { message -> [String: Any] in
                    // The patient reads their own messages as "You"; the staff, as the patient's.
                    let patientLabel = folder.patientName == nil ? labels["you"] : labels["patient"]
                    let author = message.author == .patient ? patientLabel ?? "" : message.staffName ?? labels["clinic"] ?? ""
                    return ["author": author, "fromPatient": message.author == .patient, "text": message.text,
                            "at": DateText.dateTime(message.createdAt, timeZone: folder.zone, language: language)]
                },
                "empty": conversation.messages.isEmpty,
            ]
            // A page of the latest messages (`ThreadLimits.pageDefault`), with a link to those
            // before them, and back to the latest from an earlier page.
            if let earlier = conversation.nextCursor { thread["earlier"] = "\(base)?cursor=\(earlier)#thread" }
            if paged { thread["latest"] = "\(base)#thread" }
            values["conversation"] = thread
        }
        return values
    }

    /// A file's size in words: KB or MB, one decimal.
    static func sizeText(_ bytes: Int, _ language: Language) -> String {
        let ru = language == .ru
        if bytes < 1024 * 1024 { return String(format: "%.0f %@", max(1, Double(bytes) / 1024).rounded(), ru ? "КБ" : "KB") }
        return String(format: "%.1f %@", Double(bytes) / (1024 * 1024), ru ? "МБ" : "MB")
    }
}
