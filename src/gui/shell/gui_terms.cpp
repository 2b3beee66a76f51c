#include "gui/shell/gui_terms.h"

#include <QRegularExpression>

namespace brook {

QString GuiTerms::fromCli(const QString& message)
{
    static const QRegularExpression flag(QStringLiteral("(^|[\\s(\"'])--([a-z][a-z0-9-]*)"));
    QString text = message;
    return text.replace(flag, QStringLiteral("\\1\\2"));
}

QString GuiTerms::describeLoadError(const Error& error)
{
    const QString text = fromCli(QString::fromStdString(error.message));
    const QString where = tr("Performance → Serving parameters");
    if (error.code == ErrorCode::OutOfMemory)
        return tr("%1. Lower the context length or raise the GPU memory share in %2, or choose int4 quantization.")
            .arg(text, where);
    if (error.field == "quantization") return tr("%1. Choose another quantization (or none) in %2.").arg(text, where);
    if (error.field == "device") return tr("%1. Choose the cpu device in %2.").arg(text, where);
    if (error.field == "max_model_len") return tr("%1. Lower max-model-len in %2.").arg(text, where);
    return text;
}

}  // namespace brook
