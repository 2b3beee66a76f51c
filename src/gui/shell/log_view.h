// LogView: the app's log window, fed by GuiLogSink (spdlog) through one queued call per burst.
// Keeps the last lines only, colours warnings and errors, and can filter by level.
#pragma once

#include <QWidget>

#include <memory>

class QComboBox;
class QPlainTextEdit;
class QPushButton;

namespace brook {

class GuiLogSink;
struct LogLine;

class LogView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMaxLines = 5000;

    explicit LogView(std::shared_ptr<GuiLogSink> sink, QWidget* parent = nullptr);
    ~LogView() override;

    QString text() const;

protected:
    void changeEvent(QEvent* event) override;

private slots:
    void handleNewLines();  // invoked (queued) by the sink
    void handleLevelChanged();

private:
    void append(const QList<LogLine>& lines);
    void retranslateUi();

    std::shared_ptr<GuiLogSink> m_sink;
    QPlainTextEdit* m_text;
    QComboBox* m_level;
    QPushButton* m_clear;
    int m_minLevel = 0;
};

}  // namespace brook
