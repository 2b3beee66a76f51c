// PresetLibrary: the user's prompt presets, starting from the ERNIE-friendly built-ins (a
// general assistant, writing and summary templates that wrap a request in 【任务】/【要求】/【输出】
// instructions, which the 0.3B model follows far better than a bare request). Picks a preset by
// keywords when asked. Plain value type; AppSettings persists it as JSON.
#pragma once

#include "gui/chat/prompt_preset.h"

#include <QJsonArray>
#include <QList>

#include <optional>

namespace brook {

class PresetLibrary {
public:
    PresetLibrary();  // the built-ins

    static QList<PromptPreset> builtins();

    const QList<PromptPreset>& presets() const { return m_presets; }
    const PromptPreset* find(const QString& id) const;
    // Adds a preset under a fresh id (derived from its name) and returns that id.
    QString add(PromptPreset preset);
    bool update(const PromptPreset& preset);  // matched by id
    bool remove(const QString& id);
    void restoreBuiltins();  // re-adds built-ins that were deleted

    // The preset whose keyword matches most specifically (longest keyword; ties: list order).
    std::optional<PromptPreset> chooseFor(const QString& text) const;

    QJsonArray toJson() const;
    // An empty or unreadable array gives the built-ins.
    static PresetLibrary fromJson(const QJsonArray& array);

private:
    QList<PromptPreset> m_presets;
};

}  // namespace brook
