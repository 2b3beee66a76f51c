// CodeBlockView: one fenced code block of a message: a header with its language and a Copy
// button, then the code in a monospace, selectable view.
#pragma once

#include <QFrame>

class QLabel;
class QToolButton;

namespace brook {

class AutoHeightBrowser;

class CodeBlockView : public QFrame {
    Q_OBJECT
public:
    explicit CodeBlockView(QWidget* parent = nullptr);

    void setCode(const QString& code, const QString& language);
    QString code() const { return m_code; }

signals:
    void copied(const QString& code);

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handleCopy();

private:
    void retranslateUi();

    QString m_code;
    QLabel* m_language;
    QToolButton* m_copy;
    AutoHeightBrowser* m_view;
};

}  // namespace brook
