#include "server/server_context.h"

#include "server/generation_job.h"

#include <algorithm>

namespace brook {

bool ServedModel::answersTo(const std::string& name) const
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

void ServerContext::attach(std::unique_ptr<ServedModel> model)
{
    std::lock_guard lock(m_mutex);
    m_modelOwner = std::move(model);
    m_model = m_modelOwner.get();
}

void ServerContext::setLoadError(std::string message)
{
    std::lock_guard lock(m_mutex);
    m_loadError = std::move(message);
}

std::string ServerContext::loadError() const
{
    std::lock_guard lock(m_mutex);
    return m_loadError;
}

void ServerContext::registerJob(GenerationJob* job)
{
    std::lock_guard lock(m_mutex);
    m_jobs.insert(job);
}

void ServerContext::unregisterJob(GenerationJob* job)
{
    std::lock_guard lock(m_mutex);
    m_jobs.erase(job);
}

void ServerContext::cancelAllJobs()
{
    std::lock_guard lock(m_mutex);
    for (GenerationJob* job : m_jobs) job->cancel();
}

}  // namespace brook
